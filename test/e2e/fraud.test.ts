import { unwrap } from "@payments/client";
import { describe, expect, it } from "vitest";
import { TestClock } from "../support/clock.ts";
import { clientFor, createMerchant, createToken, eventTypesOf, json, useServer } from "./fixtures.ts";

// Fraud evaluation through the generated client against the real server (response validation on): each signal
// and how the sandbox triggers it, each decision and what it does to a charge, the review life cycle, value
// lists, settings, the `fraud.evaluated` event, and the `fraud` scope. Each block runs its own server, so
// velocity counts of one block never reach another.

const BLOCKED_CARD = "4100000000000019";
const REVIEW_CARD = "4000000000009235";
const HIGH_RISK_BIN_CARD = "4000056655665556";
const GB_CARD = "4000008260000000";
/** The envelope plus exactly FraudEvaluatedEvent's own fields, which are fixed by this API. */
const EVENT_KEYS = ["created_at", "decision", "id", "livemode", "score", "signals", "tx_id", "type"];

type Customer = { email?: string; ip?: string; country?: string };

/** A server of the enclosing block, on a clock its tests move (velocity windows, review expiry). */
function harness() {
  const clock = new TestClock();
  const h = { ...useServer({}, { clock }), clock };

  const charge = async (
    card: string,
    options: { amount?: number; capture?: boolean; customer?: Customer; merchantId?: string; tokenId?: string } = {},
  ) => {
    const merchantId = options.merchantId ?? (await createMerchant(h.client)).id;
    const token = options.tokenId ?? (await createToken(h.client, card)).id;
    const res = await h.client.POST("/v1/charges", {
      body: {
        merchant_id: merchantId,
        amount: options.amount ?? 2500,
        currency: "USD",
        payment_method: { type: "card", token },
        ...(options.capture === undefined ? {} : { capture: options.capture }),
        ...(options.customer ? { customer: options.customer } : {}),
      },
    });
    expect(res.response.status, JSON.stringify(res.error)).toBe(201);
    return res.data as NonNullable<typeof res.data>;
  };
  const evaluationOf = async (c: { fraud_evaluation_id: string | null }) =>
    unwrap(await h.client.GET("/v1/fraud/evaluations/{id}", { params: { path: { id: c.fraud_evaluation_id ?? "" } } }));
  const evaluate = async (body: Record<string, unknown>) => {
    const res = await h.client.POST("/v1/fraud/evaluations", { body });
    expect(res.response.status, JSON.stringify(res.error)).toBe(201);
    return res.data as NonNullable<typeof res.data>;
  };
  const list = async (kind: string, action: string, values: string[]) => {
    const created = unwrap(
      await h.client.POST("/v1/fraud/lists", {
        body: { name: `${action} ${kind}`, kind: kind as "email", action: action as "block" },
      }),
    );
    for (const value of values) {
      unwrap(
        await h.client.POST("/v1/fraud/lists/{id}/items", { params: { path: { id: created.id } }, body: { value } }),
      );
    }
    return created;
  };
  const fraudEvents = async (txId: string) => {
    const page = unwrap(
      await h.client.GET("/v1/events", { params: { query: { type: "fraud.evaluated", limit: 100 } } }),
    );
    return page.data.filter((e) => "tx_id" in e && e.tx_id === txId);
  };
  return { h, charge, evaluationOf, evaluate, list, fraudEvents };
}

describe("decisions on charges", () => {
  const { h, charge, evaluationOf, list, fraudEvents } = harness();

  it("blocks test card 4100000000000019: status blocked, failure_code fraud_blocked, processor never called", async () => {
    const c = await charge(BLOCKED_CARD);
    expect(c).toMatchObject({ status: "blocked", failure_code: "fraud_blocked", amount_captured: 0, review: null });
    expect(c.failure_message).toContain(c.fraud_evaluation_id);
    // The processor was not asked: no authorization reference was ever stored, no payment.authorized.
    expect((await h.server.running.store.get("charges", c.id))?.processor_ref).toBeNull();
    expect((await eventTypesOf(h.client, c.id)).sort()).toEqual(["fraud.evaluated", "payment.failed"]);
    const evaluation = await evaluationOf(c);
    expect(evaluation).toMatchObject({ tx_id: c.id, source: "charge", score: 100, decision: "block" });
    expect(evaluation.signals).toEqual(["blocklist_match"]);
    expect(evaluation.rules[0]?.reason).toBe(
      "the card's BIN is on a sandbox built-in block list (test cards that are always blocked).",
    );
    const [event] = await fraudEvents(c.id);
    expect(Object.keys(event ?? {}).sort()).toEqual(EVENT_KEYS);
    expect(event).toMatchObject({
      type: "fraud.evaluated",
      tx_id: c.id,
      score: 100,
      decision: "block",
      livemode: false,
    });
  });

  it("holds test card 4000000000009235 for review: authorized, not captured even with capture true", async () => {
    const c = await charge(REVIEW_CARD, { capture: true });
    expect(c).toMatchObject({ status: "authorized", amount_captured: 0, review: { status: "open", closed_at: null } });
    expect(await evaluationOf(c)).toMatchObject({
      decision: "review",
      score: 65,
      signals: ["test_card_elevated_risk"],
    });
    const [event] = await fraudEvents(c.id);
    expect(Object.keys(event ?? {}).sort()).toEqual(EVENT_KEYS);
    expect(event).toMatchObject({ decision: "review", score: 65 });

    const path = { id: c.id };
    const capture = await h.client.POST("/v1/charges/{id}/capture", { params: { path }, body: {} });
    expect(capture.response.status).toBe(409);
    expect(capture.error?.detail).toContain("held for fraud review");
    expect((await h.client.POST("/v1/charges/{id}/void", { params: { path } })).response.status).toBe(409);

    const approved = await h.client.POST("/v1/charges/{id}/review/approve", { params: { path } });
    expect(approved.response.status).toBe(200);
    expect(approved.data).toMatchObject({ status: "captured", amount_captured: 2500, review: { status: "approved" } });
    expect(approved.data?.review?.closed_at).not.toBeNull();
    expect(await eventTypesOf(h.client, c.id)).toContain("payment.captured");
    const balance = unwrap(
      await h.client.GET("/v1/merchants/{id}/balance", { params: { path: { id: c.merchant_id } } }),
    );
    expect(balance.balances).toEqual([{ currency: "USD", available: 2500, pending: 0 }]);
    const again = await h.client.POST("/v1/charges/{id}/review/reject", { params: { path } });
    expect(again.response.status).toBe(409);
    expect(again.error?.detail).toBe("The charge's review is approved, not open.");
  });

  it("rejects a held charge into a void that refunds nothing", async () => {
    const c = await charge(REVIEW_CARD);
    const rejected = await h.client.POST("/v1/charges/{id}/review/reject", { params: { path: { id: c.id } } });
    expect(rejected.data).toMatchObject({
      status: "voided",
      amount_captured: 0,
      amount_refunded: 0,
      review: { status: "rejected" },
    });
    expect((await eventTypesOf(h.client, c.id)).sort()).toEqual([
      "fraud.evaluated",
      "payment.authorized",
      "payment.voided",
    ]);
    const balance = unwrap(
      await h.client.GET("/v1/merchants/{id}/balance", { params: { path: { id: c.merchant_id } } }),
    );
    expect(balance.balances).toEqual([]);
  });

  it("answers 409 to approve or reject on a charge that was never held", async () => {
    const c = await charge("5555555555554444");
    const res = await h.client.POST("/v1/charges/{id}/review/approve", { params: { path: { id: c.id } } });
    expect(res.response.status).toBe(409);
    expect(res.error).toMatchObject({ code: "invalid_state_transition", detail: "The charge has no open review." });
  });

  it("expires a review left open into a void once the window passes (a moved clock)", async () => {
    const settings = await h.client.PATCH("/v1/fraud/settings", { body: { review_window_seconds: 120 } });
    expect(settings.data?.review_window_seconds).toBe(120);
    const c = await charge(REVIEW_CARD);
    expect(Date.parse(c.review?.expires_at ?? "") - Date.parse(c.review?.opened_at ?? "")).toBe(120_000);
    expect(await h.server.running.domain.jobs.expireReviews()).toBe(0);
    h.clock.advance(121_000);
    expect(await h.server.running.domain.jobs.expireReviews()).toBe(1);
    const got = unwrap(await h.client.GET("/v1/charges/{id}", { params: { path: { id: c.id } } }));
    expect(got).toMatchObject({ status: "voided", review: { status: "expired" } });
    expect(await eventTypesOf(h.client, c.id)).toContain("payment.voided");
    const late = await h.client.POST("/v1/charges/{id}/review/approve", { params: { path: { id: c.id } } });
    expect(late.response.status).toBe(409);
  });

  it("refuses a customer IP that is not an address (400 naming customer.ip)", async () => {
    const merchant = await createMerchant(h.client);
    const res = await h.client.POST("/v1/charges", {
      body: {
        merchant_id: merchant.id,
        amount: 100,
        currency: "BRL",
        payment_method: { type: "pix" },
        customer: { ip: "10.0.0.999" },
      },
    });
    expect(res.response.status).toBe(400);
    expect(res.error?.param).toBe("customer.ip");
    // The schema's own rule (IpAddress: the ipv4 or ipv6 format), in words that name both.
    expect(res.error?.detail).toBe(
      "`customer.ip` must be an IPv4 or IPv6 address, such as `203.0.113.7` or `2001:db8::7`.",
    );
  });

  it("evaluates local payment methods too, on the customer's facts, and blocks them", async () => {
    const merchant = await createMerchant(h.client);
    const pix = (customer: Customer) =>
      h.client.POST("/v1/charges", {
        body: { merchant_id: merchant.id, amount: 15000, currency: "BRL", payment_method: { type: "pix" }, customer },
      });
    const vpn = unwrap(await pix({ ip: "203.0.113.50" }));
    expect(vpn.status).toBe("pending");
    expect((await evaluationOf(vpn)).signals).toEqual(["vpn_detected"]);
    await list("email", "block", ["thief@example.org"]);
    const blocked = unwrap(await pix({ email: "Thief@Example.org" }));
    expect(blocked).toMatchObject({ status: "blocked", failure_code: "fraud_blocked", next_action: null });
    expect((await eventTypesOf(h.client, blocked.id)).sort()).toEqual(["fraud.evaluated", "payment.failed"]);
  });
});

describe("every signal, and how the sandbox triggers it", () => {
  const { h, charge, evaluationOf, evaluate, list } = harness();

  it("blocklist_match: adding a card's fingerprint to a block list blocks that card's next charge", async () => {
    const token = await createToken(h.client, "6011111111111117");
    expect((await charge("", { tokenId: token.id })).status).toBe("captured");
    const blocks = await list("card_fingerprint", "block", [token.card.fingerprint]);
    const c = await charge("", { tokenId: (await createToken(h.client, "6011111111111117")).id });
    expect(c.status).toBe("blocked");
    const evaluation = await evaluationOf(c);
    expect(evaluation.signals).toEqual(["blocklist_match"]);
    expect(evaluation.rules[0]?.reason).toContain(`'${blocks.name}' (${blocks.id})`);
  });

  it("allowlist_match: an allow-list match wins over everything, even the always-blocked test card", async () => {
    await list("email", "allow", ["vip@example.com"]);
    const c = await charge(BLOCKED_CARD, { customer: { email: "vip@example.com" } });
    expect(c.status).toBe("captured");
    expect(await evaluationOf(c)).toMatchObject({
      decision: "allow",
      score: 100,
      signals: ["blocklist_match", "allowlist_match"],
    });
  });

  it("highrisk_bin: test card 4000056655665556, or a BIN on a flag list", async () => {
    const c = await charge(HIGH_RISK_BIN_CARD);
    expect(await evaluationOf(c)).toMatchObject({ signals: ["highrisk_bin"], score: 48, decision: "allow" });
    await list("card_bin", "flag", ["305693"]);
    const diners = await charge("30569309025904");
    expect((await evaluationOf(diners)).signals).toEqual(["highrisk_bin"]);
    expect(JSON.stringify(await evaluationOf(diners))).not.toContain("305693");
  });

  it("vpn_detected: sandbox ranges 203.0.113.0/24 and 2001:db8:bad::/48, or a range added to a flag list", async () => {
    const v4 = await evaluate({ amount: 1000, currency: "USD", customer: { ip: "203.0.113.99" } });
    expect(v4).toMatchObject({ signals: ["vpn_detected"], score: 48, decision: "allow", source: "facts" });
    const v6 = await evaluate({ amount: 1000, currency: "USD", customer: { ip: "2001:db8:bad::7" } });
    expect(v6.signals).toEqual(["vpn_detected"]);
    const before = await charge("3566002020360505", { customer: { ip: "100.64.12.34" } });
    expect((await evaluationOf(before)).signals).toEqual([]);
    await list("ip_address", "flag", ["100.64.0.0/10"]);
    const after = await charge("3566002020360505", { customer: { ip: "100.64.12.34" } });
    const evaluation = await evaluationOf(after);
    expect(evaluation.signals).toEqual(["vpn_detected"]);
    expect(evaluation.rules[0]?.reason).toContain("100.64.12.34 (in 100.64.0.0/10)");
  });

  it("highrisk_card, highrisk_email, highrisk_email_domain and highrisk_country: values on flag lists", async () => {
    const token = await createToken(h.client, "5200828282828210");
    await list("card_fingerprint", "flag", [token.card.fingerprint]);
    await list("email", "flag", ["mule@example.net"]);
    await list("email_domain", "flag", ["throwaway.example"]);
    await list("country", "flag", ["KP"]);
    const e = await evaluate({ amount: 1000, currency: "USD", card: { token: token.id } });
    expect(e.signals).toEqual(["highrisk_card"]);
    expect(
      (await evaluate({ amount: 1000, currency: "USD", customer: { email: "Mule@example.net" } })).signals,
    ).toEqual(["highrisk_email"]);
    const domain = await evaluate({ amount: 1000, currency: "USD", customer: { email: "x@mail.throwaway.example" } });
    expect(domain.signals).toEqual(["highrisk_email_domain"]);
    expect(domain.rules[0]?.reason).toContain("mail.throwaway.example (under throwaway.example)");
    expect((await evaluate({ amount: 1000, currency: "USD", customer: { country: "KP" } })).signals).toEqual([
      "highrisk_country",
    ]);
  });

  it("velocity_card: 10 quick attempts with one card raise it (from the 6th)", async () => {
    const token = await createToken(h.client, "2223003122003222");
    const merchant = await createMerchant(h.client);
    const signals: string[][] = [];
    for (let i = 0; i < 10; i++) {
      signals.push((await evaluationOf(await charge("", { tokenId: token.id, merchantId: merchant.id }))).signals);
    }
    expect(signals.map((s) => s.includes("velocity_card"))).toEqual([
      false,
      false,
      false,
      false,
      false,
      true,
      true,
      true,
      true,
      true,
    ]);
  });

  it("velocity_ip: more than 10 attempts from one IP address", async () => {
    const cards = ["4242424242424242", "5555555555554444", "4000000000003220", "4000002500003155"];
    let last: string[] = [];
    for (let i = 0; i < 11; i++) {
      const c = await charge(cards[i % cards.length] ?? "", { customer: { ip: "100.100.1.1" } });
      last = (await evaluationOf(c)).signals;
      if (i < 10) expect(last).not.toContain("velocity_ip");
    }
    expect(last).toContain("velocity_ip");
  });

  it("card_testing: a third small attempt from one IP address, or three declines", async () => {
    const small: string[][] = [];
    for (const card of ["4242424242424242", "5555555555554444", "4000000000003220"]) {
      small.push((await evaluationOf(await charge(card, { amount: 50, customer: { ip: "100.101.2.2" } }))).signals);
    }
    expect(small.map((s) => s.includes("card_testing"))).toEqual([false, false, true]);
    const declining = await createToken(h.client, "4000000000000002");
    for (let i = 0; i < 3; i++) expect((await charge("", { tokenId: declining.id })).status).toBe("declined");
    expect((await evaluationOf(await charge("", { tokenId: declining.id }))).signals).toContain("card_testing");
  });

  it("amount_anomaly: more than 5 times the merchant's average over at least 5 accepted charges", async () => {
    const merchant = await createMerchant(h.client);
    for (const card of [
      "4242424242424242",
      "5555555555554444",
      "4000000000003220",
      "4000002500003155",
      "3566002020360505",
    ]) {
      await charge(card, { amount: 1000, merchantId: merchant.id });
    }
    const byFacts = await evaluate({ merchant_id: merchant.id, amount: 5001, currency: "USD" });
    expect(byFacts.signals).toEqual(["amount_anomaly"]);
    expect((await evaluate({ merchant_id: merchant.id, amount: 5000, currency: "USD" })).signals).toEqual([]);
  });

  it("country_mismatch: the sandbox locates 198.51.100.0/24 in BR and card 4000008260000000 in GB", async () => {
    const byIp = await evaluate({ amount: 1000, currency: "USD", customer: { ip: "198.51.100.7", country: "DE" } });
    expect(byIp).toMatchObject({ signals: ["country_mismatch"], score: 20 });
    expect(byIp.rules[0]?.reason).toBe("The customer's country is DE, the IP address's is BR.");
    const c = await charge(GB_CARD, { customer: { country: "FR" } });
    expect((await evaluationOf(c)).rules[0]?.reason).toBe("The customer's country is FR, the card's is GB.");
    const agreed = await evaluate({
      amount: 1000,
      currency: "USD",
      card: { country: "GB" },
      customer: { country: "GB", ip_country: "GB" },
    });
    expect(agreed.signals).toEqual([]);
  });

  it("several signals add up: a VPN and a country mismatch go to review (68)", async () => {
    const e = await evaluate({
      amount: 4900,
      currency: "EUR",
      card: { bin: "424242", country: "GB" },
      customer: { ip: "203.0.113.7", country: "DE" },
    });
    expect(e).toMatchObject({ score: 68, decision: "review", signals: ["vpn_detected", "country_mismatch"] });
    expect(e.rules.map((r) => r.points)).toEqual([48, 20]);
  });
});

describe("POST /v1/fraud/evaluations, get and list", () => {
  const { h, charge, evaluate } = harness();

  it("re-evaluates an existing charge by tx_id without changing it, and records the evaluation and its event", async () => {
    const c = await charge(HIGH_RISK_BIN_CARD, { customer: { ip: "203.0.113.20" } });
    expect(c.status).toBe("blocked");
    const again = await evaluate({ tx_id: c.id });
    expect(again).toMatchObject({
      tx_id: c.id,
      source: "transaction",
      decision: "block",
      score: 96,
      signals: ["highrisk_bin", "vpn_detected"],
    });
    expect(again.id).not.toBe(c.fraud_evaluation_id);
    expect(unwrap(await h.client.GET("/v1/charges/{id}", { params: { path: { id: c.id } } }))).toEqual(c);
    const listed = unwrap(await h.client.GET("/v1/fraud/evaluations", { params: { query: { tx_id: c.id } } }));
    expect(listed.data.map((e) => e.source)).toEqual(["transaction", "charge"]);
    const events = unwrap(await h.client.GET("/v1/events", { params: { query: { type: "fraud.evaluated" } } }));
    const mine = events.data.filter((e) => "tx_id" in e && e.tx_id === c.id);
    expect(mine).toHaveLength(2);
    for (const event of mine) expect(Object.keys(event).sort()).toEqual(EVENT_KEYS);
  });

  it("gives a prospective transaction a tx_id no charge carries, and emits fraud.evaluated for it", async () => {
    const e = await evaluate({ amount: 2000, currency: "EUR" });
    expect(e).toMatchObject({
      source: "facts",
      merchant_id: null,
      score: 0,
      decision: "allow",
      signals: [],
      rules: [],
      thresholds: { review: 65, block: 75 },
    });
    expect(e.tx_id).toMatch(/^tx_[0-9A-Za-z]{24}$/);
    expect((await h.client.GET("/v1/charges/{id}", { params: { path: { id: e.tx_id } } })).response.status).toBe(404);
    const events = unwrap(await h.client.GET("/v1/events", { params: { query: { type: "fraud.evaluated" } } }));
    const event = events.data.find((x) => "tx_id" in x && x.tx_id === e.tx_id);
    expect(event).toEqual({
      id: event?.id,
      type: "fraud.evaluated",
      created_at: event?.created_at,
      livemode: false,
      tx_id: e.tx_id,
      score: 0,
      decision: "allow",
      signals: [],
    });
  });

  it("filters the list by decision", async () => {
    await evaluate({ amount: 100, currency: "USD", card: { bin: "41000099" } });
    const blocks = unwrap(
      await h.client.GET("/v1/fraud/evaluations", { params: { query: { decision: "block", limit: 100 } } }),
    );
    expect(blocks.data.length).toBeGreaterThan(0);
    expect(blocks.data.every((e) => e.decision === "block")).toBe(true);
    const allows = unwrap(
      await h.client.GET("/v1/fraud/evaluations", { params: { query: { decision: "allow", limit: 100 } } }),
    );
    expect(allows.data.every((e) => e.decision === "allow")).toBe(true);
  });

  it("answers every bad request with a problem naming the field", async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [{ tx_id: "tx_000000000000000000000000", amount: 100 }, 400, "amount"],
      [{ currency: "USD" }, 400, "amount"],
      [{ amount: 100 }, 400, "currency"],
      [{ amount: 100, currency: "XTS" }, 400, "currency"],
      [{ amount: 100, currency: "USD", customer: { ip: "203.0.113" } }, 400, "customer.ip"],
      [
        { amount: 100, currency: "USD", card: { token: "tok_000000000000000000000000", bin: "424242" } },
        400,
        "card.bin",
      ],
      [{ amount: 100, currency: "USD", card: { bin: "42" } }, 400, "card.bin"],
      [{ tx_id: "tx_000000000000000000000000" }, 404, "tx_id"],
      [{ amount: 100, currency: "USD", merchant_id: "mch_000000000000000000000000" }, 404, "merchant_id"],
      [{ amount: 100, currency: "USD", card: { token: "tok_000000000000000000000000" } }, 404, "card.token"],
    ];
    for (const [body, status, param] of cases) {
      const res = await fetch(`${h.server.url}/v1/fraud/evaluations`, {
        method: "POST",
        headers: { Authorization: `Bearer ${h.server.sandboxKey}`, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(res.status, JSON.stringify(body)).toBe(status);
      const problem = await json(res);
      expect(problem.param ?? problem.errors?.[0]?.param, JSON.stringify(problem)).toBe(param);
    }
  });

  it("answers 404 for an evaluation of the other environment", async () => {
    const live = clientFor(h.server, await h.server.key(["fraud"], { live: true }));
    const mine = unwrap(
      await live.POST("/v1/fraud/evaluations", { body: { amount: 100, currency: "USD", card: { bin: "41000012" } } }),
    );
    // Production has no built-in sandbox lists: the sandbox's blocked BIN means nothing there.
    expect(mine).toMatchObject({ livemode: true, decision: "allow", signals: [] });
    const res = await h.client.GET("/v1/fraud/evaluations/{id}", { params: { path: { id: mine.id } } });
    expect(res.response.status).toBe(404);
  });
});

describe("value lists and settings", () => {
  const { h } = harness();
  const path = (id: string) => ({ params: { path: { id } } });

  it("creates, lists, gets, fills, empties and deletes a list", async () => {
    const created = await h.client.POST("/v1/fraud/lists", {
      body: { name: "VPNs", kind: "ip_address", action: "flag" },
    });
    expect(created.response.status).toBe(201);
    const id = created.data?.id ?? "";
    expect(created.data).toMatchObject({
      object: "fraud_list",
      name: "VPNs",
      kind: "ip_address",
      action: "flag",
      item_count: 0,
    });
    expect(id).toMatch(/^fl_[0-9A-Za-z]{24}$/);

    const added = await h.client.POST("/v1/fraud/lists/{id}/items", {
      ...path(id),
      body: { value: "198.51.100.77/24" },
    });
    expect(added.response.status).toBe(201);
    expect(added.data).toMatchObject({ object: "fraud_list_item", list_id: id, value: "198.51.100.0/24" });
    expect(added.data?.id).toMatch(/^fli_[0-9A-Za-z]{24}$/);
    const v6 = unwrap(
      await h.client.POST("/v1/fraud/lists/{id}/items", { ...path(id), body: { value: "2001:DB8:0:0::/32" } }),
    );
    expect(v6.value).toBe("2001:db8::/32");
    const dup = await h.client.POST("/v1/fraud/lists/{id}/items", { ...path(id), body: { value: "198.51.100.0/24" } });
    expect(dup.response.status).toBe(409);
    expect(dup.error).toMatchObject({ code: "conflict", param: "value" });
    const bad = await h.client.POST("/v1/fraud/lists/{id}/items", { ...path(id), body: { value: "198.51.100.300" } });
    expect(bad.response.status).toBe(400);
    expect(bad.error).toMatchObject({ code: "invalid_request", param: "value" });

    expect(unwrap(await h.client.GET("/v1/fraud/lists/{id}", path(id))).item_count).toBe(2);
    const items = unwrap(await h.client.GET("/v1/fraud/lists/{id}/items", path(id)));
    expect(items.data.map((i) => i.value)).toEqual(["2001:db8::/32", "198.51.100.0/24"]);
    const byKind = unwrap(await h.client.GET("/v1/fraud/lists", { params: { query: { kind: "ip_address" } } }));
    expect(byKind.data.map((l) => l.id)).toContain(id);
    expect(
      unwrap(await h.client.GET("/v1/fraud/lists", { params: { query: { kind: "email" } } })).data.map((l) => l.id),
    ).not.toContain(id);

    const removed = await h.client.DELETE("/v1/fraud/list_items/{id}", path(added.data?.id ?? ""));
    expect(removed.data).toEqual({ id: added.data?.id, object: "fraud_list_item", deleted: true });
    expect((await h.client.DELETE("/v1/fraud/list_items/{id}", path(added.data?.id ?? ""))).response.status).toBe(404);
    expect(unwrap(await h.client.GET("/v1/fraud/lists/{id}", path(id))).item_count).toBe(1);

    const deleted = await h.client.DELETE("/v1/fraud/lists/{id}", path(id));
    expect(deleted.data).toEqual({ id, object: "fraud_list", deleted: true });
    expect((await h.client.GET("/v1/fraud/lists/{id}", path(id))).response.status).toBe(404);
    expect((await h.client.GET("/v1/fraud/lists/{id}/items", path(id))).response.status).toBe(404);
    expect((await h.client.DELETE("/v1/fraud/list_items/{id}", path(v6.id))).response.status).toBe(404);
    // The deleted list's items no longer match anything.
    const e = unwrap(
      await h.client.POST("/v1/fraud/evaluations", {
        body: { amount: 100, currency: "USD", customer: { ip: "2001:db8::1" } },
      }),
    );
    expect(e.signals).toEqual([]);
  });

  it("refuses an unknown kind or action (400) and keeps lists per environment", async () => {
    const res = await fetch(`${h.server.url}/v1/fraud/lists`, {
      method: "POST",
      headers: { Authorization: `Bearer ${h.server.sandboxKey}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "x", kind: "phone", action: "block" }),
    });
    expect(res.status).toBe(400);
    const live = clientFor(h.server, await h.server.key(["fraud"], { live: true }));
    const liveList = unwrap(
      await live.POST("/v1/fraud/lists", { body: { name: "live", kind: "country", action: "block" } }),
    );
    expect((await h.client.GET("/v1/fraud/lists/{id}", path(liveList.id))).response.status).toBe(404);
    const add = await h.client.POST("/v1/fraud/lists/{id}/items", { ...path(liveList.id), body: { value: "GB" } });
    expect(add.response.status).toBe(404);
  });

  it("reads and changes the thresholds, refusing a review threshold not below the block threshold", async () => {
    expect(unwrap(await h.client.GET("/v1/fraud/settings"))).toEqual({
      object: "fraud_settings",
      review_threshold: 65,
      block_threshold: 75,
      request_3ds_threshold: null,
      review_window_seconds: 604800,
      livemode: false,
      updated_at: null,
    });
    const bad = await h.client.PATCH("/v1/fraud/settings", { body: { review_threshold: 80 } });
    expect(bad.response.status).toBe(400);
    expect(bad.error).toMatchObject({
      param: "review_threshold",
      detail: "review_threshold: must be below block_threshold (75)",
    });
    const changed = unwrap(
      await h.client.PATCH("/v1/fraud/settings", { body: { review_threshold: 40, block_threshold: 90 } }),
    );
    expect(changed).toMatchObject({ review_threshold: 40, block_threshold: 90, review_window_seconds: 604800 });
    expect(changed.updated_at).not.toBeNull();
    const e = unwrap(
      await h.client.POST("/v1/fraud/evaluations", {
        body: { amount: 100, currency: "USD", customer: { ip: "203.0.113.1" } },
      }),
    );
    expect(e).toMatchObject({ decision: "review", thresholds: { review: 40, block: 90 } });
    const live = clientFor(h.server, await h.server.key(["fraud"], { live: true }));
    expect(unwrap(await live.GET("/v1/fraud/settings")).review_threshold).toBe(65);
  });
});

describe("the fraud scope", () => {
  const { h } = harness();

  it("lets a fraud-only key evaluate and manage lists and settings, and nothing else (403)", async () => {
    const fraud = clientFor(h.server, await h.server.key(["fraud"]));
    expect(
      (await fraud.POST("/v1/fraud/evaluations", { body: { amount: 100, currency: "USD" } })).response.status,
    ).toBe(201);
    const list = await fraud.POST("/v1/fraud/lists", {
      body: { name: "stolen", kind: "card_fingerprint", action: "block" },
    });
    expect(list.response.status).toBe(201);
    const item = await fraud.POST("/v1/fraud/lists/{id}/items", {
      params: { path: { id: list.data?.id ?? "" } },
      body: { value: `fp_${"0".repeat(32)}` },
    });
    expect(item.response.status).toBe(201);
    expect((await fraud.GET("/v1/fraud/settings")).response.status).toBe(200);
    for (const res of [
      await fraud.GET("/v1/charges"),
      await fraud.GET("/v1/merchants"),
      await fraud.GET("/v1/events"),
      await fraud.POST("/v1/tokens", {
        body: { card: "4242424242424242", holder: "A", exp_month: 12, exp_year: 2031 },
      }),
    ]) {
      expect(res.response.status).toBe(403);
    }
    const charges = clientFor(h.server, await h.server.key(["charges"]));
    const denied = await charges.POST("/v1/fraud/evaluations", { body: { amount: 100, currency: "USD" } });
    expect(denied.response.status).toBe(403);
    expect(denied.error).toMatchObject({ code: "forbidden" });
    expect((await charges.GET("/v1/fraud/lists")).response.status).toBe(403);
  });
});
