import { unwrap } from "@payments/client";
import { describe, expect, it } from "vitest";
import { ACQUIRER } from "../support/server.ts";
import {
  CHALLENGE_CARD,
  cardPayment,
  createMerchant,
  createPaymentLink,
  createSandbox,
  createToken,
  json,
  useServer,
} from "./fixtures.ts";

// The keyless pages of a sandbox on demand's objects (server/src/http/sandbox-pages.ts): a payer's
// browser carries no key, so a sandbox's hosted payment page, its public payment and its 3-D Secure
// challenge are reached under `/sandboxes/{sbx_id}`, the prefix its PaymentLink.url and next_action URLs
// carry. Paid and answered here over plain HTTP as a browser would; the headers are the pages' own.
// An unknown or deleted sandbox answers exactly what an unknown link or challenge answers.

const simulator = ACQUIRER !== "adyen";

/** What a payer's browser reads on a hosted page: its page token and where it pays. */
async function openPage(url: string) {
  const res = await fetch(url);
  const html = await res.text();
  return {
    res,
    html,
    token: /data-page-token="([^"]+)"/.exec(html)?.[1] ?? "",
    payPath: /data-pay-path="([^"]+)"/.exec(html)?.[1] ?? "",
  };
}

describe("a sandbox's pages", () => {
  const { server, client: admin } = useServer();

  const sandbox = (name: string) => createSandbox(server, admin, name);

  /** The public payment as the hosted page posts it: no key, same origin. */
  const pay = (path: string, body: Record<string, unknown>) =>
    fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.url, "sec-fetch-site": "same-origin" },
      body: JSON.stringify(body),
    });

  /** A form post of the challenge page's button, from the page itself. */
  const press = (url: string, outcome: "complete" | "fail") =>
    fetch(url, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url },
      body: `outcome=${outcome}`,
    });

  /** The pages' headers that page-security.ts sets, to compare a sandbox's page with the account's. */
  const securityHeaders = (res: Response) =>
    Object.fromEntries(
      [
        "content-security-policy",
        "x-frame-options",
        "referrer-policy",
        "cache-control",
        "x-content-type-options",
        "cross-origin-opener-policy",
        "content-type",
      ].map((name) => [name, res.headers.get(name)]),
    );

  it("serves a sandbox's link under its prefix, with the account's page headers, and takes its payment there", async () => {
    const sbx = await sandbox("pages: pay");
    const link = await createPaymentLink(sbx.client, { amount: 1250, currency: "USD" });
    const prefix = `/sandboxes/${sbx.id}`;
    expect(link.url).toBe(`${server.url}${prefix}/pay/${link.id}`);

    const page = await openPage(link.url);
    expect(page.res.status).toBe(200);
    expect(page.html).toContain("$12.50");
    expect(page.payPath).toBe(`${prefix}/v1/payment_links/${link.id}/pay`);
    // The same headers as a link of the default sandbox gets (page-security.ts, unchanged).
    const theirs = await createPaymentLink(admin, { amount: 1250, currency: "USD" });
    expect(securityHeaders(page.res)).toEqual(securityHeaders((await openPage(theirs.url)).res));
    expect(page.res.headers.get("content-security-policy")).toContain("default-src 'none'");

    const paid = await pay(page.payPath, { page_token: page.token, payment_method: cardPayment() });
    expect(paid.status).toBe(201);
    const payment = await json(paid);
    expect(payment).toMatchObject({ status: "captured" });
    // The charge is the sandbox's: seen with its key, 404 from the default sandbox.
    const charge = unwrap(await sbx.client.GET("/v1/charges/{id}", { params: { path: { id: payment.charge_id } } }));
    expect(charge).toMatchObject({ status: "captured", payment_link_id: link.id, amount: 1250 });
    const fromDefault = await admin.GET("/v1/charges/{id}", { params: { path: { id: payment.charge_id } } });
    expect(fromDefault.response.status).toBe(404);
    const used = unwrap(await sbx.client.GET("/v1/payment_links/{id}", { params: { path: { id: link.id } } }));
    expect(used.uses).toBe(1);
  });

  it("answers the unknown-link page for a sandbox's link anywhere but under its own prefix, and for an unknown or deleted sandbox", async () => {
    const [a, b] = await Promise.all([sandbox("pages: A"), sandbox("pages: B")]);
    const link = await createPaymentLink(a.client);
    const unknownLink = await fetch(`${server.url}/pay/plink_000000000000000000000000`);
    expect(unknownLink.status).toBe(404);
    const expected = { headers: securityHeaders(unknownLink), body: await unknownLink.text() };
    expect(expected.body).toContain("Payment link not found");

    const lookAlike = async (path: string) => {
      const res = await fetch(`${server.url}${path}`);
      expect({ status: res.status, headers: securityHeaders(res), body: await res.text() }, path).toEqual({
        status: 404,
        ...expected,
      });
    };
    await lookAlike(`/pay/${link.id}`); // the default sandbox's pages
    await lookAlike(`/sandboxes/${b.id}/pay/${link.id}`); // another sandbox's
    await lookAlike(`/sandboxes/sbx_000000000000000000000000/pay/${link.id}`); // no such sandbox
    await lookAlike(`/sandboxes/not-an-id/pay/${link.id}`);
    await lookAlike(`/sandboxes/${a.id}/pay/${link.id}/return?tx_id=tx_000000000000000000000000`);

    // Its payment, posted anywhere else, finds no link either.
    const token = (await openPage(link.url)).token;
    for (const path of [`/v1/payment_links/${link.id}/pay`, `/sandboxes/${b.id}/v1/payment_links/${link.id}/pay`]) {
      const refused = await pay(path, { page_token: token, payment_method: cardPayment() });
      expect(refused.status, path).toBe(404);
      expect(await json(refused), path).toMatchObject({ code: "not_found" });
    }

    // Deleted: its pages are gone like any unknown link's, at once.
    unwrap(await admin.DELETE("/v1/sandboxes/{id}", { params: { path: { id: a.id } } }));
    await lookAlike(`/sandboxes/${a.id}/pay/${link.id}`);
    const gone = await pay(`/sandboxes/${a.id}/v1/payment_links/${link.id}/pay`, {
      page_token: token,
      payment_method: cardPayment(),
    });
    expect(gone.status).toBe(404);
    expect(await json(gone)).toMatchObject({ code: "not_found", status: 404 });
  });

  it("routes nothing but the pages under a sandbox's prefix", async () => {
    const sbx = await sandbox("pages: only pages");
    const merchant = await createMerchant(sbx.client);
    // An API path under the prefix is no route, whatever key comes with it.
    const res = await fetch(`${server.url}/sandboxes/${sbx.id}/v1/merchants/${merchant.id}`);
    expect(res.status).toBe(404);
    expect(JSON.stringify(await json(res))).not.toContain(merchant.name);
  });

  it.runIf(simulator)(
    "runs a sandbox charge's 3-D Secure challenge on its page under the sandbox's prefix",
    async () => {
      const sbx = await sandbox("pages: 3ds");
      const prefix = `${server.url}/sandboxes/${sbx.id}`;
      const merchant = await createMerchant(sbx.client);
      const token = await createToken(sbx.client, CHALLENGE_CARD);
      const charge = unwrap(
        await sbx.client.POST("/v1/charges", {
          body: {
            merchant_id: merchant.id,
            amount: 4200,
            currency: "EUR",
            payment_method: { type: "card", token: token.id },
            return_url: "https://shop.example/orders/42",
          },
        }),
      );
      expect(charge.status).toBe("requires_action");
      const url = charge.next_action?.url ?? "";
      expect(url).toMatch(new RegExp(`^${prefix}/3ds/${charge.id}\\?t=[\\w-]+$`));

      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-security-policy")).toBe(
        "default-src 'none'; base-uri 'none'; frame-ancestors 'none'; style-src 'self'; img-src 'self'; form-action 'self' https://shop.example",
      );
      const html = await page.text();
      expect(html).toContain("Card ending 3220");
      // The page's form posts back under the prefix.
      const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1]?.replaceAll("&amp;", "&");
      expect(`${server.url}${action}`).toBe(url);

      // The challenge's path with another sandbox's id, or none, opens nothing.
      const wrongToken = await fetch(`${prefix}/3ds/${charge.id}?t=wrong`);
      expect(wrongToken.status).toBe(404);
      const missing = await wrongToken.text();
      const other = await sandbox("pages: 3ds other");
      for (const elsewhere of [
        url.replace(sbx.id, other.id),
        url.replace(sbx.id, "sbx_000000000000000000000000"),
        url.replace(`/sandboxes/${sbx.id}`, ""),
      ]) {
        const res = await fetch(elsewhere);
        expect(res.status, elsewhere).toBe(404);
        expect(await res.text()).toBe(missing);
        expect((await press(elsewhere, "complete")).status, elsewhere).toBe(404);
      }

      const done = await press(url, "complete");
      expect(done.status).toBe(303);
      expect(done.headers.get("location")).toBe(`https://shop.example/orders/42?tx_id=${charge.id}`);
      const after = unwrap(await sbx.client.GET("/v1/charges/{id}", { params: { path: { id: charge.id } } }));
      expect(after).toMatchObject({ status: "captured", amount_captured: 4200 });
    },
  );

  it.runIf(simulator)(
    "pays a sandbox's link with a challenge card: the challenge and the outcome page are the sandbox's",
    async () => {
      const sbx = await sandbox("pages: link 3ds");
      const prefix = `${server.url}/sandboxes/${sbx.id}`;
      const link = await createPaymentLink(sbx.client, { amount: 1800, currency: "EUR" });
      const page = await openPage(link.url);
      const payment = await json(
        await pay(page.payPath, { page_token: page.token, payment_method: cardPayment(CHALLENGE_CARD) }),
      );
      expect(payment.status).toBe("requires_action");
      expect(payment.next_action?.url).toMatch(new RegExp(`^${prefix}/3ds/tx_\\w+\\?t=`));
      const back = await press(payment.next_action.url, "complete");
      expect(back.status).toBe(303);
      const outcome = back.headers.get("location") ?? "";
      expect(outcome).toBe(`${prefix}/pay/${link.id}/return?tx_id=${payment.charge_id}`);
      const shown = await fetch(outcome);
      expect(shown.status).toBe(200);
      expect(await shown.text()).toContain("Payment received");
      const charge = unwrap(await sbx.client.GET("/v1/charges/{id}", { params: { path: { id: payment.charge_id } } }));
      expect(charge).toMatchObject({ status: "captured", payment_link_id: link.id });
    },
  );
});
