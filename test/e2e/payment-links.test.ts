import { describe, expect, it } from "vitest";
import { TestClock } from "../support/clock.ts";
import {
  cardPayment,
  clientFor,
  createMerchant,
  createPaymentLink,
  json,
  pageTokenOf,
  useServer,
  VISA,
  withServer,
} from "./fixtures.ts";

// Payment links and the public operation their hosted page pays through (payPaymentLink in
// spec/resources/payment-links.tsp). The page itself is exercised in a real browser by test/browser; here the
// API: what a link is, what the public operation accepts and refuses, and that each payment is a charge of
// the link's merchant, counted against the link.

describe("payment links", () => {
  const clock = new TestClock();
  const { server, client } = useServer({}, { clock });

  /** The public operation as a browser on the page would call it: no key, same origin. */
  async function pay(linkId: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
    const res = await fetch(`${server.url}/v1/payment_links/${linkId}/pay`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.url, "sec-fetch-site": "same-origin", ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: await json(res) };
  }

  async function payCard(linkId: string, number = VISA) {
    return pay(linkId, { page_token: await pageTokenOf(server, linkId), payment_method: cardPayment(number) });
  }

  describe("the API", () => {
    it("creates a link (201) whose url is the hosted page, with card and the currency's local methods by default", async () => {
      const merchant = await createMerchant(client);
      const res = await client.POST("/v1/payment_links", {
        body: { merchant_id: merchant.id, amount: 15_000, currency: "BRL", description: "Aula de violão" },
      });
      expect(res.response.status).toBe(201);
      const link = res.data;
      expect(link?.id).toMatch(/^plink_[0-9A-Za-z]{24}$/);
      expect(link).toMatchObject({
        object: "payment_link",
        merchant_id: merchant.id,
        amount: 15_000,
        currency: "BRL",
        payment_methods: ["card", "pix", "boleto"],
        active: true,
        expires_at: null,
        max_uses: null,
        uses: 0,
        pending_uses: 0,
        after_completion: null,
        livemode: false,
      });
      expect(link?.url).toBe(`${server.url}/pay/${link?.id}`);
      const got = await client.GET("/v1/payment_links/{id}", { params: { path: { id: link?.id ?? "" } } });
      expect(got.data).toEqual(link);
    });

    it("refuses a method of another currency, a past expiry and an inactive merchant, naming the field", async () => {
      const merchant = await createMerchant(client);
      const base = { merchant_id: merchant.id, amount: 2500, currency: "USD", description: "x" };
      const pix = await client.POST("/v1/payment_links", { body: { ...base, payment_methods: ["pix"] } });
      expect(pix.response.status).toBe(400);
      expect(pix.error).toMatchObject({ code: "invalid_request", param: "payment_methods" });
      const past = await client.POST("/v1/payment_links", { body: { ...base, expires_at: "2020-01-01T00:00:00Z" } });
      expect(past.response.status).toBe(400);
      expect(past.error).toMatchObject({ param: "expires_at" });
      const script = await client.POST("/v1/payment_links", {
        body: { ...base, after_completion: { type: "redirect", url: "javascript:alert(1)" } },
      });
      expect(script.response.status).toBe(400);
      await client.PATCH("/v1/merchants/{id}", {
        params: { path: { id: merchant.id } },
        body: { status: "suspended" },
      });
      const suspended = await client.POST("/v1/payment_links", { body: base });
      expect(suspended.response.status).toBe(409);
      expect(suspended.error).toMatchObject({ code: "merchant_inactive", param: "merchant_id" });
    });

    it("lists links newest first, by merchant and by active, and updates active, description and expiry", async () => {
      const merchant = await createMerchant(client);
      const a = await createPaymentLink(client, { merchant_id: merchant.id, description: "first" });
      const b = await createPaymentLink(client, { merchant_id: merchant.id, description: "second" });
      const off = await client.PATCH("/v1/payment_links/{id}", {
        params: { path: { id: a.id } },
        body: { active: false, description: "first, closed" },
      });
      expect(off.data).toMatchObject({ active: false, description: "first, closed" });
      const all = await client.GET("/v1/payment_links", { params: { query: { merchant_id: merchant.id } } });
      expect(all.data?.data.map((l) => l.id)).toEqual([b.id, a.id]);
      const active = await client.GET("/v1/payment_links", {
        params: { query: { merchant_id: merchant.id, active: true } },
      });
      expect(active.data?.data.map((l) => l.id)).toEqual([b.id]);
      const inactive = await client.GET("/v1/payment_links", {
        params: { query: { merchant_id: merchant.id, active: false } },
      });
      expect(inactive.data?.data.map((l) => l.id)).toEqual([a.id]);
      const expiry = "2031-01-01T00:00:00.000000Z";
      const later = await client.PATCH("/v1/payment_links/{id}", {
        params: { path: { id: b.id } },
        body: { expires_at: expiry },
      });
      expect(later.data?.expires_at).toBe(expiry);
      const cleared = await client.PATCH("/v1/payment_links/{id}", {
        params: { path: { id: b.id } },
        body: { expires_at: null },
      });
      expect(cleared.data?.expires_at).toBeNull();
    });
  });

  describe("paying through the public operation", () => {
    it("pays 4242… without any key: a captured charge of the link's merchant, its event, the balance, one use", async () => {
      const link = await createPaymentLink(client, { amount: 2500, max_uses: 5 });
      const paid = await pay(link.id, {
        page_token: await pageTokenOf(server, link.id),
        payment_method: cardPayment(),
        email: "ada@example.com",
      });
      expect(paid.status).toBe(201);
      expect(paid.body).toMatchObject({
        object: "payment_link_payment",
        payment_link_id: link.id,
        status: "captured",
        amount: 2500,
        currency: "USD",
        payment_method: { type: "card", brand: "visa", last4: "4242" },
        failure_code: null,
        livemode: false,
      });
      expect(JSON.stringify(paid.body)).not.toContain(VISA);
      expect(paid.body).not.toHaveProperty("metadata");

      const charge = await client.GET("/v1/charges/{id}", { params: { path: { id: paid.body.charge_id } } });
      expect(charge.data).toMatchObject({
        merchant_id: link.merchant_id,
        amount: 2500,
        status: "captured",
        payment_link_id: link.id,
        description: link.description,
        customer: { email: "ada@example.com" },
      });
      const byLink = await client.GET("/v1/charges", { params: { query: { payment_link_id: link.id } } });
      expect(byLink.data?.data.map((c) => c.id)).toEqual([paid.body.charge_id]);
      const balance = await client.GET("/v1/merchants/{id}/balance", { params: { path: { id: link.merchant_id } } });
      expect(balance.data?.balances).toEqual([{ currency: "USD", available: 2500, pending: 0 }]);
      const events = await client.GET("/v1/events", { params: { query: { type: "payment_link.completed" } } });
      const completed = events.data?.data.find((e) => "payment_link_id" in e && e.payment_link_id === link.id);
      expect(completed).toMatchObject({
        type: "payment_link.completed",
        tx_id: paid.body.charge_id,
        merchant_id: link.merchant_id,
        amount: 2500,
        currency: "USD",
        payment_method_type: "card",
        uses: 1,
      });
      const after = await client.GET("/v1/payment_links/{id}", { params: { path: { id: link.id } } });
      expect(after.data).toMatchObject({ uses: 1, pending_uses: 0 });
      // The card was tokenized for this one charge and its token erased: the merchant holds no reusable card.
      const token = charge.data?.payment_method.token ?? "";
      expect(token).toMatch(/^tok_/);
      const gone = await client.GET("/v1/tokens/{id}", { params: { path: { id: token } } });
      expect(gone.response.status).toBe(404);
    });

    it("answers a declined card with the reason a payer may see, and takes no use", async () => {
      const link = await createPaymentLink(client, { max_uses: 1 });
      const declined = await payCard(link.id, "4000000000000002");
      expect(declined.status).toBe(201);
      expect(declined.body).toMatchObject({
        status: "declined",
        failure_code: "card_declined",
        failure_message: "The card was declined.",
        after_completion: null,
      });
      const after = await client.GET("/v1/payment_links/{id}", { params: { path: { id: link.id } } });
      expect(after.data).toMatchObject({ uses: 0, pending_uses: 0 });
      expect((await payCard(link.id)).body.status).toBe("captured"); // the one use is still there
    });

    it("refuses a card number that fails the Luhn check (400 naming it, masked)", async () => {
      const link = await createPaymentLink(client);
      const bad = await payCard(link.id, "4242424242424241");
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: "invalid_card", param: "payment_method.number" });
      expect(JSON.stringify(bad.body)).not.toContain("4242424242424241");
    });

    it("only takes a method the link offers", async () => {
      const link = await createPaymentLink(client, { currency: "BRL", amount: 5000, payment_methods: ["card"] });
      const pix = await pay(link.id, {
        page_token: await pageTokenOf(server, link.id),
        payment_method: { type: "pix" },
      });
      expect(pix.status).toBe(400);
      expect(pix.body).toMatchObject({ param: "payment_method.type" });
    });

    it("takes only this link's unexpired page token (403 otherwise)", async () => {
      const link = await createPaymentLink(client);
      const other = await createPaymentLink(client);
      const token = await pageTokenOf(server, link.id);
      const [v, expires, nonce, mac] = token.split(".");
      const tries = [
        await pageTokenOf(server, other.id),
        `${v}.${expires}.${nonce}.${mac?.slice(0, -2)}AA`,
        `${v}.${Number(expires) + 3600}.${nonce}.${mac}`,
        "not-a-token",
      ];
      for (const page_token of tries) {
        const res = await pay(link.id, { page_token, payment_method: cardPayment() });
        expect(res.status, page_token).toBe(403);
        expect(res.body).toMatchObject({ code: "forbidden", param: "page_token" });
      }
      const missing = await pay(link.id, { payment_method: cardPayment() });
      expect(missing.status).toBe(400);
      expect((await pay(link.id, { page_token: token, payment_method: cardPayment() })).status).toBe(201);
    });

    it("refuses cross-site requests (Origin, Sec-Fetch-Site) and answers no CORS preflight", async () => {
      const link = await createPaymentLink(client);
      const body = { page_token: await pageTokenOf(server, link.id), payment_method: cardPayment() };
      const evil = await pay(link.id, body, { origin: "https://evil.example" });
      expect(evil.status).toBe(403);
      expect(evil.body).toMatchObject({ code: "forbidden" });
      const crossSite = await pay(link.id, body, { "sec-fetch-site": "cross-site" });
      expect(crossSite.status).toBe(403);
      const preflight = await fetch(`${server.url}/v1/payment_links/${link.id}/pay`, {
        method: "OPTIONS",
        headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
      });
      expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
      // Not a browser (no Origin, no Sec-Fetch-Site): the page token alone decides.
      const plain = await fetch(`${server.url}/v1/payment_links/${link.id}/pay`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(plain.status).toBe(201);
    });

    it("replays a retried payment with the same Idempotency-Key instead of charging twice", async () => {
      const link = await createPaymentLink(client);
      const body = { page_token: await pageTokenOf(server, link.id), payment_method: cardPayment() };
      const first = await pay(link.id, body, { "idempotency-key": "pay-once" });
      const again = await pay(link.id, body, { "idempotency-key": "pay-once" });
      expect(first.status).toBe(201);
      expect(again.status).toBe(201);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.body).toEqual(first.body);
      const charges = await client.GET("/v1/charges", { params: { query: { payment_link_id: link.id } } });
      expect(charges.data?.data).toHaveLength(1);
      // The same key on another link is another key: a payer's keys never meet across links.
      const other = await createPaymentLink(client);
      const elsewhere = await pay(
        other.id,
        { page_token: await pageTokenOf(server, other.id), payment_method: cardPayment() },
        { "idempotency-key": "pay-once" },
      );
      expect(elsewhere.status).toBe(201);
      expect(elsewhere.body.charge_id).not.toBe(first.body.charge_id);
    });

    it("never takes more than max_uses payments, even at once (none 5xx)", async () => {
      const link = await createPaymentLink(client, { max_uses: 3 });
      // Twelve payers who all opened the page while it was still open.
      const tokens = await Promise.all(Array.from({ length: 12 }, () => pageTokenOf(server, link.id)));
      const results = await Promise.all(
        tokens.map((page_token) => pay(link.id, { page_token, payment_method: cardPayment() })),
      );
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s >= 500)).toEqual([]);
      expect(statuses.filter((s) => s === 201)).toHaveLength(3);
      expect(results.filter((r) => r.status === 409).every((r) => r.body.code === "payment_link_unavailable")).toBe(
        true,
      );
      const after = await client.GET("/v1/payment_links/{id}", { params: { path: { id: link.id } } });
      expect(after.data).toMatchObject({ uses: 3, pending_uses: 0 });
      const charges = await client.GET("/v1/charges", {
        params: { query: { payment_link_id: link.id, status: "captured", limit: 100 } },
      });
      expect(charges.data?.data).toHaveLength(3);
    });

    it("refuses payments once inactive or expired (409 payment_link_unavailable)", async () => {
      const link = await createPaymentLink(client);
      const token = await pageTokenOf(server, link.id);
      await client.PATCH("/v1/payment_links/{id}", { params: { path: { id: link.id } }, body: { active: false } });
      const inactive = await pay(link.id, { page_token: token, payment_method: cardPayment() });
      expect(inactive.status).toBe(409);
      expect(inactive.body).toMatchObject({ code: "payment_link_unavailable" });

      const expiring = await createPaymentLink(client, { expires_at: new Date(clock.ms + 1000).toISOString() });
      const expiringToken = await pageTokenOf(server, expiring.id);
      clock.advance(1000);
      const expired = await pay(expiring.id, { page_token: expiringToken, payment_method: cardPayment() });
      expect(expired.status).toBe(409);
      expect(expired.body.detail).toMatch(/expired/);
    });

    it("starts a pix payment that holds a use, completes it as the payer (payment_link.completed), or frees it on expiry", async () => {
      const link = await createPaymentLink(client, { currency: "BRL", amount: 15_000, max_uses: 1 });
      expect(link.payment_methods).toEqual(["card", "pix", "boleto"]);
      const token = await pageTokenOf(server, link.id);
      const started = await pay(link.id, { page_token: token, payment_method: { type: "pix" } });
      expect(started.status).toBe(201);
      expect(started.body).toMatchObject({ status: "pending", next_action: { type: "display_qr_code" } });
      expect(started.body.next_action.qr_payload).toContain("br.gov.bcb.pix");
      const held = await client.GET("/v1/payment_links/{id}", { params: { path: { id: link.id } } });
      expect(held.data).toMatchObject({ uses: 0, pending_uses: 1 });
      // The one use is held: a second payer is refused until the first pays or lets it expire.
      const second = await pay(link.id, { page_token: token, payment_method: cardPayment() });
      expect(second.status).toBe(409);
      expect(second.body).toMatchObject({ code: "payment_link_unavailable" });
      await client.POST("/v1/sandbox/charges/{id}/expire", { params: { path: { id: started.body.charge_id } } });
      const freed = await client.GET("/v1/payment_links/{id}", { params: { path: { id: link.id } } });
      expect(freed.data).toMatchObject({ uses: 0, pending_uses: 0 });

      const again = await pay(link.id, {
        page_token: await pageTokenOf(server, link.id),
        payment_method: { type: "pix" },
      });
      await client.POST("/v1/sandbox/charges/{id}/complete", { params: { path: { id: again.body.charge_id } } });
      const done = await client.GET("/v1/payment_links/{id}", { params: { path: { id: link.id } } });
      expect(done.data).toMatchObject({ uses: 1, pending_uses: 0 });
      const events = await client.GET("/v1/events", {
        params: { query: { type: "payment_link.completed", limit: 100 } },
      });
      const mine = events.data?.data.filter((e) => "payment_link_id" in e && e.payment_link_id === link.id);
      expect(mine).toHaveLength(1);
      expect(mine?.[0]).toMatchObject({ tx_id: again.body.charge_id, payment_method_type: "pix", uses: 1 });
    });

    it("works for a production link (no test banner), through the typed client too", async () => {
      const live = clientFor(server, await server.key(["*"], { live: true }));
      const link = await createPaymentLink(live);
      expect(link.livemode).toBe(true);
      const page = await (await fetch(link.url)).text();
      expect(page).not.toContain("Test mode");
      const paid = await live.POST("/v1/payment_links/{id}/pay", {
        params: { path: { id: link.id } },
        body: { page_token: await pageTokenOf(server, link.id), payment_method: cardPayment() },
      });
      expect(paid.response.status).toBe(201);
      expect(paid.data).toMatchObject({ status: "captured", livemode: true });
      // Production captures wait for settlement: the merchant's funds are pending.
      const balance = await live.GET("/v1/merchants/{id}/balance", { params: { path: { id: link.merchant_id } } });
      expect(balance.data?.balances).toEqual([{ currency: "USD", available: 0, pending: 2500 }]);
    });
  });

  describe("the hosted page (HTTP)", () => {
    it("serves the page with a strict CSP, no-store and nosniff, the merchant, the amount for its currency", async () => {
      const merchant = await createMerchant(client, "Kissa <Tokyo>");
      const link = await createPaymentLink(client, { merchant_id: merchant.id, amount: 1500, currency: "JPY" });
      const res = await fetch(link.url, { headers: { "accept-language": "en-US" } });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain("unsafe-inline");
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      const html = await res.text();
      expect(html).toContain("Kissa &lt;Tokyo&gt;"); // escaped
      expect(html).toContain("¥1,500");
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
      expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/); // nothing from another host
    });

    it("shows clear pages for an unknown, inactive, expired and used-up link", async () => {
      const unknown = await fetch(`${server.url}/pay/plink_000000000000000000000000`);
      expect(unknown.status).toBe(404);
      expect(await unknown.text()).toContain("Payment link not found");

      const inactive = await createPaymentLink(client);
      await client.PATCH("/v1/payment_links/{id}", { params: { path: { id: inactive.id } }, body: { active: false } });
      const off = await fetch(inactive.url);
      expect(off.status).toBe(410);
      expect(await off.text()).toContain("not active");

      const expiring = await createPaymentLink(client, { expires_at: new Date(clock.ms + 1000).toISOString() });
      clock.advance(1000);
      const expired = await fetch(expiring.url);
      expect(expired.status).toBe(410);
      const expiredPage = await expired.text();
      expect(expiredPage).toContain("expired");
      expect(expiredPage).not.toContain("data-page-token");

      const used = await createPaymentLink(client, { max_uses: 1 });
      await payCard(used.id);
      const usedUp = await fetch(used.url);
      expect(usedUp.status).toBe(410);
      const text = await usedUp.text();
      expect(text).toContain("already been used");
      expect(text).not.toContain("data-page-token");
    });

    it("is rate limited per client address, with its own limit and not the keyless one", async () => {
      const env = { RATE_LIMIT_PAYMENT_ADDRESS_PER_MINUTE: "2", RATE_LIMIT_ANONYMOUS_PER_MINUTE: "1" };
      await withServer(
        env,
        async ({ server: limited, client: c }) => {
          const link = await createPaymentLink(c);
          const token = await pageTokenOf(limited, link.id);
          const attempt = () =>
            fetch(`${limited.url}/v1/payment_links/${link.id}/pay`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ page_token: token, payment_method: cardPayment() }),
            });
          // Two keyless payments pass although the keyless limit is one a minute.
          expect((await attempt()).status).toBe(201);
          expect((await attempt()).status).toBe(201);
          const third = await attempt();
          expect(third.status).toBe(429);
          expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
          expect(await json(third)).toMatchObject({ code: "rate_limited" });
        },
        { clock: TestClock.atNextMinute() },
      );
    });

    it("is rate limited per payment link", async () => {
      await withServer(
        { RATE_LIMIT_PAYMENT_LINK_PER_MINUTE: "1" },
        async ({ server: limited, client: c }) => {
          const link = await createPaymentLink(c);
          const other = await createPaymentLink(c);
          const attempt = async (id: string) =>
            fetch(`${limited.url}/v1/payment_links/${id}/pay`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ page_token: await pageTokenOf(limited, id), payment_method: cardPayment() }),
            });
          expect((await attempt(link.id)).status).toBe(201);
          expect((await attempt(link.id)).status).toBe(429);
          expect((await attempt(other.id)).status).toBe(201);
        },
        { clock: TestClock.atNextMinute() },
      );
    });
  });
});
