import { unwrap } from "@payments/client";
import { describe, expect, it } from "vitest";
import { ACQUIRER } from "../support/server.ts";
import {
  CHALLENGE_CARD,
  cardPayment,
  clientFor,
  createMerchant,
  createPaymentLink,
  createToken,
  eventTypesOf,
  pageTokenOf,
  useServer,
} from "./fixtures.ts";

// 3-D Secure through the API and the sandbox issuer's challenge page (docs/three-d-secure.md): a
// challenge card's charge waits requires_action with a redirect, the page's Complete and Fail move it
// and send the payer back to return_url, and the sandbox clock expires one left unanswered.

// Under Adyen (test/vitest.adyen.config.ts) the stand-in answers the challenge card with RedirectShopper:
// next_action.url is the issuer's page (the stand-in's), whose Complete or Fail sends the payer back through
// our challenge step (/3ds/{tx_id}/return, /payments/details) to return_url. `answer` below presses the
// issuer's button on either and returns what the payer's browser gets from this server at the end, so the
// outcome tests are the same for both acquirers. Our own issuer page and the sandbox helper are the
// simulator's: their tests run there, and under Adyen the helper is refused.
const simulator = ACQUIRER !== "adyen";

describe("3-D Secure", () => {
  const { server, client } = useServer();

  async function challenged(options: { returnUrl?: string; capture?: boolean } = {}) {
    const merchant = await createMerchant(client);
    const token = await createToken(client, CHALLENGE_CARD);
    const charge = unwrap(
      await client.POST("/v1/charges", {
        body: {
          merchant_id: merchant.id,
          amount: 4200,
          currency: "EUR",
          payment_method: { type: "card", token: token.id },
          capture: options.capture ?? true,
          ...(options.returnUrl ? { return_url: options.returnUrl } : {}),
        },
      }),
    );
    return { merchant, charge };
  }

  /** A form post of the page's button, as the browser sends it from the page itself. */
  const press = (url: string, outcome: string) =>
    fetch(url, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: new URL(url).origin },
      body: `outcome=${outcome}`,
    });

  /**
   * The payer answers the issuer's challenge at next_action.url: this server's answer to their browser. On
   * the simulator that is our issuer page's own answer; under Adyen the issuer's page (the stand-in's)
   * redirects them to our challenge step's return, whose answer it is.
   */
  async function answer(url: string, outcome: "complete" | "fail"): Promise<Response> {
    const pressed = await press(url, outcome);
    if (simulator) return pressed;
    expect(pressed.status).toBe(302);
    const back = pressed.headers.get("location") ?? "";
    expect(back).toMatch(new RegExp(`^${server.url}/3ds/tx_\\w+/return\\?t=[\\w-]+&redirectResult=`));
    return fetch(back, { redirect: "manual" });
  }

  it.runIf(simulator)(
    "answers requires_action with a redirect_to_url next_action, and the sandbox helper completes it",
    async () => {
      const { charge, merchant } = await challenged({ capture: false });
      expect(charge).toMatchObject({
        status: "requires_action",
        amount_captured: 0,
        three_d_secure: { result: null, version: "2.2.0", liability_shift: false, eci: null },
      });
      expect(charge.next_action?.type).toBe("redirect_to_url");
      expect(charge.next_action?.url).toMatch(new RegExp(`^${server.url}/3ds/${charge.id}\\?t=`));
      const balance = unwrap(await client.GET("/v1/merchants/{id}/balance", { params: { path: { id: merchant.id } } }));
      expect(balance.balances).toEqual([]);
      const answered = unwrap(
        await client.POST("/v1/sandbox/charges/{id}/three_d_secure", {
          params: { path: { id: charge.id } },
          body: { outcome: "complete" },
        }),
      );
      expect(answered).toMatchObject({ status: "authorized", next_action: null });
      expect(answered.three_d_secure).toMatchObject({ result: "authenticated", liability_shift: true, eci: "05" });
      const captured = unwrap(
        await client.POST("/v1/charges/{id}/capture", { params: { path: { id: charge.id } }, body: { amount: 1000 } }),
      );
      expect(captured).toMatchObject({ status: "captured", amount_captured: 1000 });
      expect(await eventTypesOf(client, charge.id)).toEqual(
        expect.arrayContaining(["payment.requires_action", "payment.authorized", "payment.captured"]),
      );
    },
  );

  it.runIf(simulator)(
    "serves the challenge page with the pay page's security headers; Complete redirects to return_url",
    async () => {
      const { charge } = await challenged({ returnUrl: "https://shop.example/orders/42?lang=fr" });
      const url = charge.next_action?.url ?? "";
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-security-policy")).toBe(
        "default-src 'none'; base-uri 'none'; frame-ancestors 'none'; style-src 'self'; img-src 'self'; form-action 'self' https://shop.example",
      );
      expect(page.headers.get("x-frame-options")).toBe("DENY");
      expect(page.headers.get("referrer-policy")).toBe("same-origin");
      const html = await page.text();
      expect(html).toContain("Card ending 3220");
      expect(html).toMatch(/<button class="pay" type="submit" name="outcome" value="complete">Complete<\/button>/);

      // Another site's form may not answer it.
      const forged = await fetch(url, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://evil.example" },
        body: "outcome=complete",
      });
      expect(forged.status).toBe(403);
      // Nor a link without its token.
      expect((await fetch(`${server.url}/3ds/${charge.id}?t=wrong`)).status).toBe(404);

      const done = await press(url, "complete");
      expect(done.status).toBe(303);
      expect(done.headers.get("location")).toBe(`https://shop.example/orders/42?lang=fr&tx_id=${charge.id}`);
      const after = unwrap(await client.GET("/v1/charges/{id}", { params: { path: { id: charge.id } } }));
      expect(after).toMatchObject({ status: "captured", amount_captured: 4200 });
      // Pressed again (another tab): the page shows where the charge stands.
      const again = await press(url, "fail");
      expect(again.status).toBe(409);
      expect(await again.text()).toContain("Payment confirmed");
    },
  );

  it("Fail on the issuer's page declines the charge and, without a return_url, shows the outcome", async () => {
    const { charge } = await challenged();
    const failed = await answer(charge.next_action?.url ?? "", "fail");
    expect(failed.status).toBe(200);
    expect(await failed.text()).toContain("Payment not confirmed");
    const after = unwrap(await client.GET("/v1/charges/{id}", { params: { path: { id: charge.id } } }));
    expect(after).toMatchObject({ status: "declined", failure_code: "authentication_failed" });
    expect(after.three_d_secure).toMatchObject({ result: "failed", liability_shift: false });
  });

  it("expires a charge left unanswered when the sandbox clock passes THREE_D_SECURE_EXPIRY_SECONDS", async () => {
    const { charge } = await challenged();
    const advanced = unwrap(await client.POST("/v1/sandbox/clock/advance", { body: { seconds: 3601 } }));
    expect(advanced.ran.charges_expired).toBeGreaterThanOrEqual(1);
    const after = unwrap(await client.GET("/v1/charges/{id}", { params: { path: { id: charge.id } } }));
    expect(after).toMatchObject({ status: "expired", next_action: null });
  });

  it.runIf(!simulator)(
    "under Adyen: the issuer's page, then our return, authorize with Adyen's 3-D Secure result; capture and events follow",
    async () => {
      const { charge, merchant } = await challenged({ capture: false, returnUrl: "https://shop.example/orders/7" });
      expect(charge).toMatchObject({
        status: "requires_action",
        amount_captured: 0,
        three_d_secure: { result: null, version: "2.2.0", liability_shift: false, eci: null },
        next_action: { type: "redirect_to_url", return_url: "https://shop.example/orders/7" },
      });
      const url = charge.next_action?.url ?? "";
      // The issuer's page is Adyen's (the stand-in's), not ours; nothing is authorized or owed yet.
      expect(url.startsWith(server.url)).toBe(false);
      expect((await fetch(url)).status).toBe(200);
      const balance = unwrap(await client.GET("/v1/merchants/{id}/balance", { params: { path: { id: merchant.id } } }));
      expect(balance.balances).toEqual([]);
      // The sandbox helper cannot answer Adyen's challenge: the payer does, on the issuer's page.
      const helper = await client.POST("/v1/sandbox/charges/{id}/three_d_secure", {
        params: { path: { id: charge.id } },
        body: { outcome: "complete" },
      });
      expect(helper.response.status).toBe(409);

      const back = await answer(url, "complete");
      expect(back.status).toBe(303);
      expect(back.headers.get("location")).toBe(`https://shop.example/orders/7?tx_id=${charge.id}`);
      const after = unwrap(await client.GET("/v1/charges/{id}", { params: { path: { id: charge.id } } }));
      expect(after).toMatchObject({ status: "authorized", next_action: null, amount_captured: 0 });
      expect(after.three_d_secure).toEqual({
        result: "authenticated",
        version: "2.2.0",
        liability_shift: true,
        eci: "05",
      });
      // The payer reloads the return page: the charge is shown where it stands, nothing sent again.
      const reload = await fetch(back.url, { redirect: "manual" });
      expect(reload.status).toBe(303);
      // A return link without the charge's token opens nothing.
      const forged = new URL(back.url);
      forged.searchParams.set("t", "wrong");
      expect((await fetch(forged, { redirect: "manual" })).status).toBe(404);

      const captured = unwrap(
        await client.POST("/v1/charges/{id}/capture", { params: { path: { id: charge.id } }, body: { amount: 1000 } }),
      );
      expect(captured).toMatchObject({ status: "captured", amount_captured: 1000 });
      expect(await eventTypesOf(client, charge.id)).toEqual(
        expect.arrayContaining(["payment.requires_action", "payment.authorized", "payment.captured"]),
      );
    },
  );

  it("refuses the sandbox helper with a production key (404)", async () => {
    const live = clientFor(server, await server.key(["*"], { live: true }));
    const res = await live.POST("/v1/sandbox/charges/{id}/three_d_secure", {
      params: { path: { id: "tx_000000000000000000000000" } },
      body: { outcome: "complete" },
    });
    expect(res.response.status).toBe(404);
  });

  it("runs the challenge from a payment link's hosted page and shows the outcome there", async () => {
    const link = await createPaymentLink(client, { amount: 1800, currency: "EUR" });
    const pay = async (card: string) =>
      (await (
        await fetch(`${server.url}/v1/payment_links/${link.id}/pay`, {
          method: "POST",
          headers: { "content-type": "application/json", origin: server.url },
          body: JSON.stringify({ page_token: await pageTokenOf(server, link.id), payment_method: cardPayment(card) }),
        })
      ).json()) as { status: string; charge_id: string; next_action: { type: string; url: string } | null };
    const payment = await pay(CHALLENGE_CARD);
    expect(payment.status).toBe("requires_action");
    expect(payment.next_action?.type).toBe("redirect_to_url");
    const back = await answer(payment.next_action?.url ?? "", "complete");
    expect(back.status).toBe(303);
    const outcome = back.headers.get("location") ?? "";
    expect(outcome).toBe(`${server.url}/pay/${link.id}/return?tx_id=${payment.charge_id}`);
    const page = await fetch(outcome);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(await page.text()).toContain("Payment received");
    const charge = unwrap(await client.GET("/v1/charges/{id}", { params: { path: { id: payment.charge_id } } }));
    expect(charge).toMatchObject({ status: "captured", payment_link_id: link.id });
    // The card's token was kept for the challenge only: erased once it was answered.
    const token = await client.GET("/v1/tokens/{id}", { params: { path: { id: charge.payment_method.token ?? "" } } });
    expect(token.response.status).toBe(404);
    const uses = unwrap(await client.GET("/v1/payment_links/{id}", { params: { path: { id: link.id } } }));
    expect(uses).toMatchObject({ uses: 1, pending_uses: 0 });

    // Failed: declined, shown as such, and the link's use is freed.
    const failed = await pay(CHALLENGE_CARD);
    const declined = await answer(failed.next_action?.url ?? "", "fail");
    expect(await (await fetch(declined.headers.get("location") ?? "")).text()).toContain("Payment declined");
    expect(unwrap(await client.GET("/v1/payment_links/{id}", { params: { path: { id: link.id } } }))).toMatchObject({
      uses: 1,
      pending_uses: 0,
    });
    // Another link's outcome page does not show this charge.
    const other = await createPaymentLink(client);
    expect((await fetch(`${server.url}/pay/${other.id}/return?tx_id=${payment.charge_id}`)).status).toBe(404);
  });
});
