import { createHmac, hkdfSync, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { refusal, testDomain } from "../../../test-support/domain.ts";
import { createClock } from "../kernel/clock.ts";
import type { OutcomeRecorder } from "../kernel/commit.ts";
import { iso } from "../kernel/time.ts";
import { createPageTokens } from "./page-token.ts";
import type { LinkPayment, PayMethodInput } from "./pay.ts";
import type { PaymentLinkDoc } from "./records.ts";
import { linkState, methodsFor } from "./state.ts";
import { claimUse, followTransition } from "./usage.ts";

// The rules of payment links (domain/payment-links): the public payment can only charge the link's
// merchant its amount; uses are counted in the charge's transaction and never pass max_uses, even at
// once; a pending payment holds a use until it is paid or expires; the page token binds a payment to a
// page of that link; the card's token does not outlive its charge.

const card = (number = "4242424242424242"): Extract<PayMethodInput, { type: "card" }> => ({
  type: "card",
  number,
  exp_month: 12,
  exp_year: 2031,
  cvc: "123",
  holder: "Ada Lovelace",
});

async function world(options: Parameters<typeof testDomain>[0] = {}) {
  const t = testDomain(options);
  const caller = t.caller();
  const merchant = await t.domain.merchants.create(caller, { name: "Acme" });
  const link = (input: Partial<Parameters<typeof t.domain.paymentLinks.create>[1]> = {}) =>
    t.domain.paymentLinks.create(caller, {
      merchant_id: merchant.id,
      amount: 2500,
      currency: "USD",
      description: "Coffee",
      ...input,
    });
  const token = async (id: string) => {
    const page = await t.domain.paymentLinks.page(id);
    if (!page.pageToken) throw new Error(`link ${id} is ${page.state}`);
    return page.pageToken;
  };
  const pay = async (id: string, method: PayMethodInput = card(), outcome?: OutcomeRecorder) =>
    t.domain.paymentLinks.pay(
      id,
      { page_token: await token(id), payment_method: method },
      { requestId: "req_t", outcome },
    );
  const reload = async (id: string) => (await t.store.get("payment_links", id)) as PaymentLinkDoc;
  return { ...t, caller, live: t.caller(true), merchant, link, token, pay, reload };
}

describe("creating and changing links", () => {
  it("offers card and the currency's local methods by default, and only those", async () => {
    expect(methodsFor("BRL")).toEqual(["card", "pix", "boleto"]);
    expect(methodsFor("MXN")).toEqual(["card", "oxxo", "spei"]);
    expect(methodsFor("EUR")).toEqual(["card", "sepa_debit"]);
    expect(methodsFor("USD")).toEqual(["card"]);
    const w = await world();
    expect((await w.link({ currency: "BRL" })).payment_methods).toEqual(["card", "pix", "boleto"]);
    expect(await refusal(w.link({ payment_methods: ["card", "oxxo"] }))).toMatchObject({ param: "payment_methods" });
    expect(await refusal(w.link({ payment_methods: ["card", "card"] }))).toMatchObject({ param: "payment_methods" });
  });

  it("checks money, expiry in the future, the redirect's scheme and the merchant", async () => {
    const w = await world();
    expect(await refusal(w.link({ amount: 0 }))).toMatchObject({ param: "amount" });
    expect(await refusal(w.link({ currency: "CHF" }))).toMatchObject({ param: "currency" });
    expect(await refusal(w.link({ expires_at: "2026-11-21T10:00:00Z" }))).toMatchObject({ param: "expires_at" });
    expect(await refusal(w.link({ expires_at: "not a date" }))).toMatchObject({ param: "expires_at" });
    expect((await w.link({ expires_at: "2026-11-21T10:00:01Z" })).expires_at).toBe("2026-11-21T10:00:01.000000Z");
    for (const url of ["javascript:alert(1)", "ftp://example.com/x", "no url"]) {
      expect(await refusal(w.link({ after_completion: { type: "redirect", url } })), url).toMatchObject({
        param: "after_completion.url",
      });
    }
    await w.domain.merchants.update(w.caller, w.merchant.id, { status: "suspended" });
    expect(await refusal(w.link())).toMatchObject({ code: "merchant_inactive" });
  });

  it("updates active, description, expiry (or clears it) and metadata, never the counts", async () => {
    const w = await world();
    const link = await w.link({ max_uses: 2 });
    await w.pay(link.id);
    const updated = await w.domain.paymentLinks.update(w.caller, link.id, {
      active: false,
      description: "Closed",
      expires_at: "2027-01-01T00:00:00Z",
      metadata: { a: "b" },
    });
    expect(updated).toMatchObject({ active: false, description: "Closed", metadata: { a: "b" }, uses: 1, claimed: 1 });
    expect(updated.expires_at).toBe("2027-01-01T00:00:00.000000Z");
    expect((await w.domain.paymentLinks.update(w.caller, link.id, { expires_at: null })).expires_at).toBeNull();
    expect(
      await refusal(w.domain.paymentLinks.update(w.caller, link.id, { expires_at: "2020-01-01T00:00:00Z" })),
    ).toMatchObject({
      param: "expires_at",
    });
    expect(await refusal(w.domain.paymentLinks.update(w.live, link.id, { active: true }))).toMatchObject({
      code: "not_found",
    });
  });

  it("gives the hosted page's address as the link's url", async () => {
    const w = await world();
    const link = await w.link();
    expect(w.domain.paymentLinks.url(link)).toBe(`https://pay.example.com/pay/${link.id}`);
  });
});

describe("whether a link takes payments", () => {
  const base: PaymentLinkDoc = {
    id: "plink_x",
    livemode: false,
    created_at: "2026-11-21T10:00:00.000000Z",
    updated_at: "2026-11-21T10:00:00.000000Z",
    merchant_id: "mch_x",
    amount: 1,
    currency: "USD",
    description: "x",
    payment_methods: ["card"],
    active: true,
    expires_at: null,
    max_uses: null,
    uses: 0,
    pending_uses: 0,
    claimed: 0,
    after_completion: null,
    metadata: {},
  };
  const merchant = {
    id: "mch_x",
    livemode: false,
    created_at: base.created_at,
    updated_at: base.created_at,
    name: "M",
    status: "active" as const,
    metadata: {},
  };
  const now = new Date("2026-11-21T12:00:00Z");

  it("is open while active, unexpired and under max_uses, with an active merchant", () => {
    expect(linkState(base, merchant, now)).toBe("open");
    expect(linkState({ ...base, active: false }, merchant, now)).toBe("inactive");
    expect(linkState(base, { ...merchant, status: "suspended" }, now)).toBe("inactive");
    expect(linkState(base, null, now)).toBe("inactive");
    expect(linkState({ ...base, expires_at: "2026-11-21T12:00:00.000000Z" }, merchant, now)).toBe("expired");
    expect(linkState({ ...base, expires_at: "2026-11-21T12:00:00.001000Z" }, merchant, now)).toBe("open");
    expect(linkState({ ...base, max_uses: 2, claimed: 2 }, merchant, now)).toBe("used_up");
    expect(linkState({ ...base, max_uses: 2, claimed: 1 }, merchant, now)).toBe("open");
  });
});

describe("paying a link", () => {
  it("makes a charge of the link's merchant, amount and currency, linked to it, and counts a use with its event", async () => {
    const w = await world();
    const link = await w.link({ max_uses: 10 });
    const { charge } = await w.pay(link.id);
    expect(charge).toMatchObject({
      merchant_id: w.merchant.id,
      amount: 2500,
      currency: "USD",
      status: "captured",
      payment_link_id: link.id,
      description: "Coffee",
    });
    expect(await w.reload(link.id)).toMatchObject({ uses: 1, pending_uses: 0, claimed: 1 });
    const events = await w.store.findAll("events", {}, 100);
    // The link's event comes last in the charge's transaction: newest first, it leads.
    expect(events.map((e) => e.type).slice(0, 3)).toEqual([
      "payment_link.completed",
      "payment.captured",
      "payment.authorized",
    ]);
    expect(events[0]?.payload).toMatchObject({ payment_link_id: link.id, tx_id: charge.id, uses: 1 });
  });

  it("erases the card's token after the charge, declined or not", async () => {
    const w = await world();
    const link = await w.link();
    const paid = await w.pay(link.id);
    const declined = await w.pay(link.id, card("4000000000000002"));
    for (const { charge } of [paid, declined]) {
      const token = await w.store.get("tokens", charge.payment_method.token ?? "");
      expect(token).toMatchObject({ sealed: null });
      expect(token?.deleted_at).not.toBeNull();
      expect(await refusal(w.domain.tokens.get(w.caller, token?.id ?? ""))).toMatchObject({ code: "not_found" });
    }
  });

  it("declined or blocked: an answer, not an error; no use taken", async () => {
    const w = await world();
    const link = await w.link({ max_uses: 1 });
    const { charge } = await w.pay(link.id, card("4000000000000002"));
    expect(charge).toMatchObject({ status: "declined", failure_code: "card_declined" });
    expect(await w.reload(link.id)).toMatchObject({ uses: 0, pending_uses: 0, claimed: 0 });
    // The sandbox's always-blocked test card (fraud evaluation runs on every payment through a link).
    const blocked = await w.pay(link.id, card("4100000000000019"));
    expect(blocked.charge.status).toBe("blocked");
    expect(blocked.charge.fraud_evaluation_id).toMatch(/^fe_/);
    expect(await w.reload(link.id)).toMatchObject({ claimed: 0 });
  });

  it("never passes max_uses, with 20 payers at once", async () => {
    const w = await world();
    const link = await w.link({ max_uses: 5 });
    const tokens = await Promise.all(Array.from({ length: 20 }, () => w.token(link.id)));
    const results = await Promise.allSettled(
      tokens.map((page_token) =>
        w.domain.paymentLinks.pay(link.id, { page_token, payment_method: card() }, { requestId: "req_t" }),
      ),
    );
    const paid = results.filter((r) => r.status === "fulfilled");
    expect(paid).toHaveLength(5);
    for (const r of results.filter((x) => x.status === "rejected")) {
      expect((r as PromiseRejectedResult).reason).toMatchObject({ code: "payment_link_unavailable" });
    }
    expect(await w.reload(link.id)).toMatchObject({ uses: 5, claimed: 5 });
    expect(await w.store.findAll("charges", { payment_link_id: link.id }, 100)).toHaveLength(5);
    const balance = await w.store.get("balances", `${w.merchant.id}:USD`);
    expect(balance?.available).toBe(5 * 2500);
    // The losers' charges were rolled back inside their transactions; their cards' tokens are erased too.
    const vaulted = await w.store.findAll("tokens", {}, 100);
    expect(vaulted).toHaveLength(20);
    expect(vaulted.every((t) => t.sealed === null)).toBe(true);
  });

  it("a pending local payment holds a use: paid, it becomes a use (payment_link.completed); expired, it is freed", async () => {
    const w = await world();
    const link = await w.link({ currency: "BRL", amount: 15_000, max_uses: 1 });
    const first = await w.pay(link.id, { type: "pix" });
    expect(first.charge).toMatchObject({ status: "pending", payment_link_id: link.id });
    expect(await w.reload(link.id)).toMatchObject({ uses: 0, pending_uses: 1, claimed: 1 });
    expect((await w.domain.paymentLinks.page(link.id)).state).toBe("used_up");
    await w.domain.charges.expire(w.caller, first.charge.id);
    expect(await w.reload(link.id)).toMatchObject({ uses: 0, pending_uses: 0, claimed: 0 });

    const second = await w.pay(link.id, { type: "boleto" });
    await w.domain.charges.complete(w.caller, second.charge.id);
    expect(await w.reload(link.id)).toMatchObject({ uses: 1, pending_uses: 0, claimed: 1 });
    const completed = (await w.store.findAll("events", { type: "payment_link.completed" })).map((e) => e.payload);
    expect(completed).toEqual([
      expect.objectContaining({ tx_id: second.charge.id, payment_method_type: "boleto", uses: 1 }),
    ]);
  });

  it("expiring pending charges through the job frees their uses", async () => {
    const w = await world();
    const link = await w.link({ currency: "BRL", amount: 15_000, max_uses: 2 });
    await w.pay(link.id, { type: "pix" });
    await w.pay(link.id, { type: "pix" });
    expect((await w.reload(link.id)).claimed).toBe(2);
    w.advance(3601);
    expect(await w.domain.jobs.expire()).toBe(2);
    expect(await w.reload(link.id)).toMatchObject({ pending_uses: 0, claimed: 0 });
  });

  it("a card payment held for fraud review holds a use: approved it counts, rejected it is freed", async () => {
    const w = await world();
    const link = await w.link({ max_uses: 2 });
    // The sandbox's elevated-risk test card goes to review: authorized and held, not captured.
    const a = (await w.pay(link.id, card("4000000000009235"))).charge;
    const b = (await w.pay(link.id, card("4000000000009235"))).charge;
    expect(a).toMatchObject({ status: "authorized", review: { status: "open" } });
    expect(await w.reload(link.id)).toMatchObject({ uses: 0, pending_uses: 2, claimed: 2 });
    expect((await w.domain.paymentLinks.page(link.id)).state).toBe("used_up");
    await w.domain.charges.approveReview(w.caller, a.id);
    expect(await w.reload(link.id)).toMatchObject({ uses: 1, pending_uses: 1, claimed: 2 });
    const completed = await w.store.findAll("events", { type: "payment_link.completed" });
    expect(completed.map((e) => e.payload.tx_id)).toEqual([a.id]);
    await w.domain.charges.rejectReview(w.caller, b.id);
    expect(await w.reload(link.id)).toMatchObject({ uses: 1, pending_uses: 0, claimed: 1 });
    expect((await w.domain.paymentLinks.page(link.id)).state).toBe("open");
  });

  it("an authorized charge captured or voided later moves its link's counts too", async () => {
    const w = await world();
    const link = await w.link({ max_uses: 2 });
    // The pay operation always captures; a held authorization is made here directly, as it would be linked.
    const hold = async () => {
      const token = await w.domain.tokens.create(w.caller, {
        card: "4242424242424242",
        holder: "A",
        exp_month: 12,
        exp_year: 2031,
      });
      const reloaded = await w.reload(link.id);
      return w.domain.charges.create(
        w.caller,
        {
          merchant_id: w.merchant.id,
          amount: 2500,
          currency: "USD",
          payment_method: { type: "card", token: token.id },
          capture: false,
        },
        {
          paymentLinkId: link.id,
          inTransaction: (tx, made) =>
            claimUse(
              tx,
              createClock(() => new Date()),
              reloaded,
              made,
            ),
        },
      );
    };
    const a = await hold();
    const b = await hold();
    expect(await w.reload(link.id)).toMatchObject({ uses: 0, pending_uses: 2, claimed: 2 });
    await w.domain.charges.capture(w.caller, a.id);
    expect(await w.reload(link.id)).toMatchObject({ uses: 1, pending_uses: 1, claimed: 2 });
    await w.domain.charges.void(w.caller, b.id);
    expect(await w.reload(link.id)).toMatchObject({ uses: 1, pending_uses: 0, claimed: 1 });
  });

  it("refuses an inactive, expired or used-up link, and a method it does not offer", async () => {
    const w = await world();
    const link = await w.link({ max_uses: 1, expires_at: "2026-11-21T10:30:00Z" });
    const token = await w.token(link.id);
    const attempt = (method: PayMethodInput = card()) =>
      w.domain.paymentLinks.pay(link.id, { page_token: token, payment_method: method }, { requestId: "r" });
    expect(await refusal(attempt({ type: "pix" }))).toMatchObject({ param: "payment_method.type" });
    await w.domain.paymentLinks.update(w.caller, link.id, { active: false });
    expect(await refusal(attempt())).toMatchObject({ code: "payment_link_unavailable" });
    await w.domain.paymentLinks.update(w.caller, link.id, { active: true });
    w.advance(1800); // the link's expiry, within the page token's hour
    const expired = await refusal(attempt());
    expect(expired).toMatchObject({ code: "payment_link_unavailable" });
    expect(expired.message).toMatch(/expired/);
    expect(await w.store.findAll("charges", { payment_link_id: link.id })).toHaveLength(0);
    expect(
      await refusal(
        w.domain.paymentLinks.pay(
          "plink_000000000000000000000000",
          { page_token: token, payment_method: card() },
          { requestId: "r" },
        ),
      ),
    ).toMatchObject({ code: "not_found" });
  });

  it("names the pay operation's fields when the vault refuses the card", async () => {
    const w = await world();
    const link = await w.link();
    expect(await refusal(w.pay(link.id, card("4242424242424241")))).toMatchObject({
      code: "invalid_card",
      param: "payment_method.number",
    });
    expect(await refusal(w.pay(link.id, { ...card(), exp_year: 2025 }))).toMatchObject({
      param: "payment_method.exp_year",
    });
    expect(await refusal(w.pay(link.id, { ...card(), exp_month: 10, exp_year: 2026 }))).toMatchObject({
      param: "payment_method.exp_month",
    });
    expect(await refusal(w.pay(link.id, { ...card(), cvc: "12" }))).toMatchObject({ param: "payment_method.cvc" });
    expect(await w.store.findAll("charges", {})).toHaveLength(0);
  });

  it("passes the payer's e-mail and address to the charge (for fraud evaluation), and records the outcome with it", async () => {
    const w = await world();
    const link = await w.link();
    const recorded: unknown[] = [];
    const outcome: OutcomeRecorder = {
      record: async (_tx, result) => {
        recorded.push(result);
      },
    };
    const result = await w.domain.paymentLinks.pay(
      link.id,
      { page_token: await w.token(link.id), payment_method: card(), email: "ada@example.com" },
      { requestId: "req_t", ip: "203.0.113.7", outcome },
    );
    expect(result.charge.customer).toEqual({ email: "ada@example.com", ip: "203.0.113.7" });
    expect(recorded).toHaveLength(1);
    const { link: recordedLink, charge } = recorded[0] as LinkPayment;
    expect(recordedLink.id).toBe(link.id);
    expect(charge.id).toBe(result.charge.id);
  });

  it("pays a production link in production, whatever key (if any) the payer's request carried", async () => {
    const w = await world();
    const live = w.live;
    const merchant = await w.domain.merchants.create(live, { name: "Live" });
    const link = await w.domain.paymentLinks.create(live, {
      merchant_id: merchant.id,
      amount: 100,
      currency: "USD",
      description: "Live",
    });
    const { charge } = await w.pay(link.id);
    expect(charge.livemode).toBe(true);
    expect(await w.domain.paymentLinks.livemodeOf(link.id)).toBe(true);
    expect(await w.domain.paymentLinks.livemodeOf("plink_none")).toBeNull();
  });
});

describe("counting uses in the charge's transaction (usage.ts)", () => {
  it("refuses the claim of a link turned off after the payer's request was checked", async () => {
    const w = await world();
    const link = await w.link({ max_uses: 5 });
    const { charge } = await w.pay(link.id);
    await w.store.update("payment_links", link.id, { set: { active: false } });
    const err = await refusal(
      w.store.transaction((tx) =>
        claimUse(
          tx,
          createClock(() => new Date()),
          link,
          charge,
        ),
      ),
    );
    expect(err).toMatchObject({ code: "payment_link_unavailable" });
    expect(await w.reload(link.id)).toMatchObject({ uses: 1, claimed: 1 });
  });

  it("follows only a held use's end: pending or authorized → captured, expired, voided or declined", async () => {
    const w = await world();
    const link = await w.link({ currency: "BRL", amount: 100 });
    const { charge } = await w.pay(link.id, { type: "pix" });
    // Any status, even one CHARGE_MACHINE never writes: what follows a transition only reads it (Plain).
    type Any = Parameters<typeof followTransition>[2];
    const follow = (from: Any, status: Any, linkId = link.id) =>
      w.store.transaction((tx) =>
        followTransition(
          tx,
          createClock(() => new Date()),
          from,
          { ...charge, status, payment_link_id: linkId },
        ),
      );
    // Not the end of a held use: nothing moves.
    await follow("captured", "partially_refunded");
    await follow("captured", "refunded");
    await follow("pending", "pending");
    await follow("requires_action", "pending");
    await follow("pending", "captured", "");
    expect(await w.reload(link.id)).toMatchObject({ uses: 0, pending_uses: 1, claimed: 1 });
    // 3-D Secure: a requires_action charge declined (its payer failed the challenge) frees its use.
    await follow("requires_action", "declined");
    expect(await w.reload(link.id)).toMatchObject({ uses: 0, pending_uses: 0, claimed: 0 });
    const hold = () =>
      w.store.transaction((tx) => tx.update("payment_links", link.id, { inc: { pending_uses: 1, claimed: 1 } }));
    await hold();
    // A pending charge the acquirer's notification refused (a local payment; a card Adyen took undecided,
    // at creation or after 3-D Secure) frees its use too.
    await follow("pending", "declined");
    expect(await w.reload(link.id)).toMatchObject({ uses: 0, pending_uses: 0, claimed: 0 });
    await hold();
    await follow("pending", "captured");
    expect(await w.reload(link.id)).toMatchObject({ uses: 1, pending_uses: 0, claimed: 1 });
    // A held use that was never counted is a bug, not a silent negative count.
    await expect(follow("authorized", "voided")).rejects.toThrow(/no pending use/);
    expect(await w.reload(link.id)).toMatchObject({ uses: 1, pending_uses: 0, claimed: 1 });
  });
});

describe("a link's updated_at follows its counts (PaymentLink.updated_at)", () => {
  it("moves when a payment takes a use, and when a held use ends", async () => {
    const w = await world();
    const link = await w.link({ currency: "BRL", amount: 100 });
    w.advance(60);
    const { charge } = await w.pay(link.id, { type: "pix" });
    expect((await w.reload(link.id)).updated_at).toBe(iso(w.now()));
    w.advance(60);
    await w.domain.charges.complete(w.caller, charge.id);
    expect(await w.reload(link.id)).toMatchObject({ uses: 1, updated_at: iso(w.now()) });
  });
});

describe("page tokens", () => {
  const key = randomBytes(32);
  const now = new Date("2026-11-21T10:00:00Z");
  const tokens = createPageTokens(key, 3600);
  const refused = (fn: () => void) => {
    try {
      fn();
    } catch (err) {
      return err;
    }
    return null;
  };

  it("verifies a token of this link until it expires", () => {
    const token = tokens.issue("plink_a", now);
    expect(token).toMatch(/^v1\.[0-9]+\.[0-9A-Za-z]{16}\.[A-Za-z0-9_-]{43}$/);
    expect(refused(() => tokens.verify("plink_a", token, now))).toBeNull();
    expect(refused(() => tokens.verify("plink_a", token, new Date(now.getTime() + 3600_000)))).toBeNull();
    expect(refused(() => tokens.verify("plink_a", token, new Date(now.getTime() + 3601_000)))).toMatchObject({
      code: "forbidden",
      param: "page_token",
    });
  });

  it("refuses another link's token, an altered one, one under another key, and malformed ones", () => {
    const token = tokens.issue("plink_a", now);
    const [v, expires, nonce, mac] = token.split(".") as [string, string, string, string];
    const cases = [
      ["another link", () => tokens.verify("plink_b", token, now)],
      ["later expiry", () => tokens.verify("plink_a", `${v}.${Number(expires) + 60}.${nonce}.${mac}`, now)],
      ["other nonce", () => tokens.verify("plink_a", `${v}.${expires}.${"A".repeat(16)}.${mac}`, now)],
      ["altered mac", () => tokens.verify("plink_a", `${v}.${expires}.${nonce}.${mac.slice(1)}A`, now)],
      ["short mac", () => tokens.verify("plink_a", `${v}.${expires}.${nonce}.${mac.slice(2)}`, now)],
      ["other version", () => tokens.verify("plink_a", `v2.${expires}.${nonce}.${mac}`, now)],
      ["other key", () => createPageTokens(randomBytes(32), 3600).verify("plink_a", token, now)],
      ["not a token", () => tokens.verify("plink_a", "hello", now)],
      ["empty", () => tokens.verify("plink_a", "", now)],
      ["bad expiry", () => tokens.verify("plink_a", `${v}.x${expires}.${nonce}.${mac}`, now)],
    ] as const;
    for (const [name, fn] of cases) {
      expect(refused(fn), name).toMatchObject({ code: "forbidden", param: "page_token" });
    }
  });

  it("is an HMAC-SHA256 under a key derived with its own label from the fingerprint key (pinned)", () => {
    const fingerprintKey = Buffer.alloc(32, 7);
    const derived = Buffer.from(
      hkdfSync("sha256", fingerprintKey, Buffer.alloc(0), "payments/payment-page-token/v1", 32),
    );
    const expires = String(Math.floor(now.getTime() / 1000) + 60);
    const nonce = "AbCdEfGhIjKlMnOp";
    const mac = createHmac("sha256", derived).update(`v1.plink_a.${expires}.${nonce}`, "utf8").digest("base64url");
    const pinned = createPageTokens(fingerprintKey, 60);
    expect(refused(() => pinned.verify("plink_a", `v1.${expires}.${nonce}.${mac}`, now))).toBeNull();
    // The fingerprint key itself (no derivation) does not make a valid token.
    const underRawKey = createHmac("sha256", fingerprintKey)
      .update(`v1.plink_a.${expires}.${nonce}`)
      .digest("base64url");
    expect(refused(() => pinned.verify("plink_a", `v1.${expires}.${nonce}.${underRawKey}`, now))).toMatchObject({
      code: "forbidden",
    });
    expect(pinned.issue("plink_a", now).split(".")[1]).toBe(expires);
  });

  it("issues a fresh token for every page", () => {
    expect(tokens.issue("plink_a", now)).not.toBe(tokens.issue("plink_a", now));
  });
});
