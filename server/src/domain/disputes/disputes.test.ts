import { describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import { DomainError } from "../kernel/errors.ts";
import { verifyLedger } from "../ledger/verify.ts";

// Disputes (spec/resources/disputes.tsp) on the real use cases and an in-memory store, with a clock the
// test moves. Each money rule has its test: a chargeback's opening withdraws the amount and the fee (even
// below zero), winning gives the amount back and keeps the fee, losing keeps both, an inquiry moves
// nothing until it is escalated, a disputed charge is not refunded; after each, the ledger verifies clean.

const FEE = 1500;
const DAY = 86_400;

async function setup() {
  const ctx = testDomain({ disputeFees: { USD: FEE } });
  const sandbox = ctx.caller(false);
  const merchant = await ctx.domain.merchants.create(sandbox, { name: "Disputed shop" });
  const charge = async (amount: number, card = "4242424242424242") => {
    const token = await ctx.domain.tokens.create(sandbox, { card, holder: "Ada", exp_month: 12, exp_year: 2031 });
    return ctx.domain.charges.create(sandbox, {
      merchant_id: merchant.id,
      amount,
      currency: "USD",
      payment_method: { type: "card", token: token.id },
    });
  };
  const available = async () => (await ctx.store.get("balances", `${merchant.id}:USD`))?.available;
  const postings = async (disputeId: string) =>
    (await ctx.store.findAll("postings", { source_id: disputeId })).map((p) => [p.type, p.lines]).reverse();
  const eventTypes = async () =>
    (await ctx.store.findAll("events", { livemode: false }, 1000))
      .map((e) => e.type)
      .filter((t) => t.startsWith("dispute."))
      .reverse();
  const verified = async () => expect((await verifyLedger(ctx.store)).differences).toEqual([]);
  const open = (chargeId: string, input = {}) => ctx.domain.disputes.sandboxOpen(sandbox, chargeId, input);
  return { ...ctx, sandbox, merchant, charge, available, postings, eventTypes, verified, open };
}

const refusedWith = async (promise: Promise<unknown>, code: string, message: RegExp) => {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  expect((err as DomainError).code).toBe(code);
  expect((err as DomainError).message).toMatch(message);
};

describe("a chargeback's money", () => {
  it("withdraws the amount and the fee at opening, as a `dispute` and a `fee` posting", async () => {
    const { charge, open, available, postings, eventTypes, verified, merchant } = await setup();
    const tx = await charge(10_000);
    expect(await available()).toBe(10_000);
    const dispute = await open(tx.id);
    expect(dispute).toMatchObject({ status: "needs_response", amount: 10_000, fee: FEE, reason: "fraudulent" });
    expect(dispute.balance_transactions).toHaveLength(2);
    expect(await available()).toBe(10_000 - 10_000 - FEE);
    const m = `merchant:${merchant.id}:available`;
    expect(await postings(dispute.id)).toEqual([
      [
        "dispute",
        [
          { account: m, amount: -10_000 },
          { account: "acquirer:clearing", amount: 10_000 },
        ],
      ],
      [
        "fee",
        [
          { account: m, amount: -FEE },
          { account: "platform:fee_revenue", amount: FEE },
        ],
      ],
    ]);
    expect(await eventTypes()).toEqual(["dispute.created", "dispute.funds_withdrawn"]);
    await verified();
  });

  it("takes the balance below zero when it does not cover the dispute (the overdraft rule), and verify accepts it", async () => {
    const { domain, sandbox, merchant, charge, open, available, verified } = await setup();
    const tx = await charge(5000);
    // The merchant cashed everything out already.
    await domain.cashouts.create(sandbox, {
      merchant_id: merchant.id,
      amount: 5000,
      currency: "USD",
      destination: { type: "iban", iban: "DE89 3704 0044 0532 0130 00", account_holder: "Shop" },
    });
    expect(await available()).toBe(0);
    await open(tx.id);
    expect(await available()).toBe(-5000 - FEE);
    await verified();
  });

  it("gives the amount back when the merchant wins, and keeps the fee", async () => {
    const { domain, sandbox, charge, open, available, postings, eventTypes, verified } = await setup();
    const tx = await charge(10_000);
    const dispute = await open(tx.id);
    const submitted = await domain.disputes.update(sandbox, dispute.id, {
      evidence: { product_description: "Coffee beans", shipping_tracking_number: "1Z999" },
      submit: true,
    });
    expect(submitted.status).toBe("under_review");
    const won = await domain.disputes.sandboxResolve(sandbox, dispute.id, "won");
    expect(won).toMatchObject({ status: "won", closed_at: expect.any(String), evidence_due_by: null });
    expect(won.balance_transactions).toHaveLength(3);
    expect(await available()).toBe(10_000 - FEE);
    expect((await postings(dispute.id)).map(([type]) => type)).toEqual(["dispute", "fee", "dispute_reversal"]);
    expect(await eventTypes()).toEqual([
      "dispute.created",
      "dispute.funds_withdrawn",
      "dispute.updated",
      "dispute.funds_reinstated",
      "dispute.closed",
    ]);
    await verified();
    // Won: the charge may be refunded again.
    await domain.charges.refund(sandbox, tx.id, { amount: 1000 });
    await verified();
  });

  it("keeps the money withdrawn when the merchant accepts (closeDispute): lost, and the charge is never refunded", async () => {
    const { domain, sandbox, charge, open, available, eventTypes, verified } = await setup();
    const tx = await charge(10_000);
    const dispute = await open(tx.id);
    const lost = await domain.disputes.close(sandbox, dispute.id);
    expect(lost.status).toBe("lost");
    expect(await available()).toBe(-FEE);
    expect(await eventTypes()).toEqual(["dispute.created", "dispute.funds_withdrawn", "dispute.closed"]);
    await refusedWith(domain.charges.refund(sandbox, tx.id, {}), "invalid_state_transition", /is disputed/);
    await verified();
  });

  it("keeps the money withdrawn when the bank decides against the merchant", async () => {
    const { domain, sandbox, charge, open, available, verified } = await setup();
    const dispute = await open((await charge(10_000)).id);
    await domain.disputes.update(sandbox, dispute.id, {
      evidence: { uncategorized_text: "It was sent" },
      submit: true,
    });
    expect((await domain.disputes.sandboxResolve(sandbox, dispute.id, "lost")).status).toBe("lost");
    expect(await available()).toBe(-FEE);
    await verified();
  });

  it("takes no fee in a currency DISPUTE_FEES does not list", async () => {
    const ctx = testDomain();
    const sandbox = ctx.caller(false);
    const merchant = await ctx.domain.merchants.create(sandbox, { name: "No fee" });
    const token = await ctx.domain.tokens.create(sandbox, {
      card: "4242424242424242",
      holder: "Ada",
      exp_month: 12,
      exp_year: 2031,
    });
    const tx = await ctx.domain.charges.create(sandbox, {
      merchant_id: merchant.id,
      amount: 700,
      currency: "EUR",
      payment_method: { type: "card", token: token.id },
    });
    const dispute = await ctx.domain.disputes.sandboxOpen(sandbox, tx.id, {});
    expect(dispute.fee).toBe(0);
    expect(dispute.balance_transactions).toHaveLength(1);
    expect((await ctx.store.get("balances", `${merchant.id}:EUR`))?.available).toBe(0);
    expect((await verifyLedger(ctx.store)).differences).toEqual([]);
  });
});

describe("refunds and disputes", () => {
  it("refuses to refund a charge while a chargeback runs", async () => {
    const { domain, sandbox, charge, open } = await setup();
    const tx = await charge(10_000);
    const dispute = await open(tx.id);
    await refusedWith(
      domain.charges.refund(sandbox, tx.id, { amount: 100 }),
      "invalid_state_transition",
      new RegExp(`disputed \\(${dispute.id}\\)`),
    );
  });

  it("disputes only what is left after a partial refund, and refuses a fully refunded charge", async () => {
    const { domain, sandbox, charge, open, verified } = await setup();
    const whole = await charge(3000);
    await domain.charges.refund(sandbox, whole.id, {});
    await refusedWith(open(whole.id), "invalid_state_transition", /fully refunded/);
    const partly = await charge(10_000);
    await domain.charges.refund(sandbox, partly.id, { amount: 4000 });
    expect((await open(partly.id)).amount).toBe(6000);
    await verified();
  });

  it("opens one dispute per charge", async () => {
    const { charge, open } = await setup();
    const tx = await charge(1000);
    const first = await open(tx.id);
    await refusedWith(open(tx.id), "invalid_state_transition", new RegExp(first.id));
  });

  it("never lets a refund and a chargeback's opening racing on one charge both succeed", async () => {
    for (let round = 0; round < 6; round++) {
      const { domain, sandbox, charge, open, available, verified } = await setup();
      const tx = await charge(10_000);
      const race = [domain.charges.refund(sandbox, tx.id, {}), open(tx.id)];
      const outcomes = await Promise.allSettled(round % 2 === 0 ? race : race.reverse());
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
      const charged = await domain.charges.get(sandbox, tx.id);
      const disputes = await domain.disputes.list(sandbox, { charge_id: tx.id }, { limit: 10 });
      // Exactly one way the cardholder got the money back.
      expect(charged.amount_refunded === 10_000).toBe(disputes.data.length === 0);
      expect(await available()).toBe(disputes.data.length === 1 ? -FEE : 0);
      await verified();
    }
  });
});

describe("inquiries", () => {
  it("move no money, take evidence, and close when decided for the merchant", async () => {
    const { domain, sandbox, charge, open, available, eventTypes, verified } = await setup();
    const tx = await charge(2000);
    const inquiry = await open(tx.id, { inquiry: true, reason: "general" });
    expect(inquiry).toMatchObject({ status: "warning_needs_response", fee: 0, balance_transactions: [] });
    expect(await available()).toBe(2000);
    const submitted = await domain.disputes.update(sandbox, inquiry.id, {
      evidence: { customer_name: "Ada" },
      submit: true,
    });
    expect(submitted.status).toBe("warning_under_review");
    expect((await domain.disputes.sandboxResolve(sandbox, inquiry.id, "won")).status).toBe("warning_closed");
    expect(await available()).toBe(2000);
    expect(await eventTypes()).toEqual(["dispute.created", "dispute.updated", "dispute.closed"]);
    await verified();
  });

  it("let the charge be refunded, and become a chargeback (the money withdrawn) when the bank escalates", async () => {
    const { domain, sandbox, charge, open, available, eventTypes, verified } = await setup();
    const tx = await charge(2000);
    const inquiry = await open(tx.id, { inquiry: true });
    await domain.charges.refund(sandbox, tx.id, { amount: 500 });
    const escalated = await domain.disputes.sandboxResolve(sandbox, inquiry.id, "lost");
    expect(escalated).toMatchObject({ status: "needs_response", amount: 1500, fee: FEE });
    expect(await available()).toBe(2000 - 500 - 1500 - FEE);
    expect(await eventTypes()).toEqual(["dispute.created", "dispute.updated", "dispute.funds_withdrawn"]);
    await refusedWith(domain.charges.refund(sandbox, tx.id, {}), "invalid_state_transition", /is disputed/);
    await verified();
  });
});

describe("evidence", () => {
  it("keeps a draft without changing the status, merges fields, and takes none once submitted", async () => {
    const { domain, sandbox, charge, open } = await setup();
    const dispute = await open((await charge(1000)).id);
    const draft = await domain.disputes.update(sandbox, dispute.id, { evidence: { customer_name: "Ada" } });
    expect(draft.status).toBe("needs_response");
    expect(draft.evidence_submitted_at).toBeNull();
    const submitted = await domain.disputes.update(sandbox, dispute.id, {
      evidence: { shipping_carrier: "UPS" },
      submit: true,
    });
    expect(submitted.evidence).toMatchObject({ customer_name: "Ada", shipping_carrier: "UPS", refund_policy: null });
    expect(submitted.evidence_submitted_at).toEqual(expect.any(String));
    await refusedWith(
      domain.disputes.update(sandbox, dispute.id, { evidence: { customer_name: "Bob" } }),
      "invalid_state_transition",
      /under_review: evidence can be changed or submitted only while it needs a response/,
    );
    await refusedWith(domain.disputes.close(sandbox, dispute.id), "invalid_state_transition", /under_review/);
  });

  it("loses an unanswered chargeback and closes an unanswered inquiry when the deadline passes, not a submitted one", async () => {
    const { domain, sandbox, charge, open, advance, available, verified } = await setup();
    const unanswered = await open((await charge(1000)).id);
    const inquiry = await open((await charge(1000)).id, { inquiry: true });
    const answered = await open((await charge(1000)).id);
    await domain.disputes.update(sandbox, answered.id, { evidence: { customer_name: "Ada" }, submit: true });
    advance(7 * DAY - 1);
    expect(await domain.disputes.expireDue(false)).toBe(0);
    advance(1);
    expect(await domain.disputes.expireDue(false)).toBe(2);
    expect(await domain.disputes.expireDue(false)).toBe(0);
    expect((await domain.disputes.get(sandbox, unanswered.id)).status).toBe("lost");
    expect((await domain.disputes.get(sandbox, inquiry.id)).status).toBe("warning_closed");
    expect((await domain.disputes.get(sandbox, answered.id)).status).toBe("under_review");
    expect(await available()).toBe(3000 - 2000 - 2 * FEE);
    await verified();
  });
});

describe("the dispute test cards", () => {
  it.each([
    ["4000000000000259", "fraudulent", "needs_response"],
    ["4000000000002685", "product_not_received", "needs_response"],
    ["4000000000001976", "fraudulent", "warning_needs_response"],
  ])("%s opens a %s dispute an hour after capture", async (card, reason, status) => {
    const { domain, sandbox, charge, advance } = await setup();
    const tx = await charge(2500, card);
    expect(tx.status).toBe("captured");
    advance(3599);
    expect(await domain.disputes.openScheduledDue(false)).toBe(0);
    advance(1);
    expect(await domain.disputes.openScheduledDue(false)).toBe(1);
    expect(await domain.disputes.openScheduledDue(false)).toBe(0);
    const { data } = await domain.disputes.list(sandbox, { charge_id: tx.id }, { limit: 10 });
    expect(data).toMatchObject([{ reason, status, amount: 2500 }]);
  });

  it("opens none on a charge refunded in full before its time, and does not try again", async () => {
    const { domain, sandbox, charge, advance, store } = await setup();
    const tx = await charge(2500, "4000000000000259");
    await domain.charges.refund(sandbox, tx.id, {});
    advance(3600);
    expect(await domain.disputes.openScheduledDue(false)).toBe(0);
    expect((await store.get("scheduled_disputes", tx.id))?.done).toBe(true);
    expect(await domain.disputes.nextScheduled(false, new Date(0))).toBeNull();
  });

  it("schedules nothing for other cards, nor for a card authorized and not captured until later", async () => {
    const { domain, sandbox, charge, advance, merchant } = await setup();
    await charge(2500);
    const token = await domain.tokens.create(sandbox, {
      card: "4000000000000259",
      holder: "Ada",
      exp_month: 12,
      exp_year: 2031,
    });
    const held = await domain.charges.create(sandbox, {
      merchant_id: merchant.id,
      amount: 900,
      currency: "USD",
      capture: false,
      payment_method: { type: "card", token: token.id },
    });
    advance(2 * 3600);
    expect(await domain.disputes.openScheduledDue(false)).toBe(0);
    // Captured now: its dispute comes an hour after the capture.
    await domain.charges.capture(sandbox, held.id);
    expect(await domain.disputes.nextScheduled(false, new Date(0))).not.toBeNull();
    advance(3600);
    expect(await domain.disputes.openScheduledDue(false)).toBe(1);
  });
});

describe("the fraud signal", () => {
  const signalsOf = async (ctx: Awaited<ReturnType<typeof setup>>, fraudEvaluationId: string | null | undefined) => {
    const evaluation = await ctx.store.get("fraud_evaluations", fraudEvaluationId ?? "");
    return evaluation?.rules ?? [];
  };

  it("a fraudulent dispute raises disputed_card on the same card's next charge, explained; other reasons do not", async () => {
    const ctx = await setup();
    const first = await ctx.charge(1000, "5555555555554444");
    expect((await signalsOf(ctx, first.fraud_evaluation_id)).map((r) => r.rule)).not.toContain("disputed_card");
    await ctx.open(first.id, { reason: "product_not_received" });
    const second = await ctx.charge(1000, "5555555555554444");
    expect((await signalsOf(ctx, second.fraud_evaluation_id)).map((r) => r.rule)).not.toContain("disputed_card");

    const dispute = await ctx.open(second.id, { reason: "fraudulent" });
    const third = await ctx.charge(1000, "5555555555554444");
    expect(await signalsOf(ctx, third.fraud_evaluation_id)).toContainEqual({
      rule: "disputed_card",
      points: 50,
      reason: `A charge with this card was disputed as fraudulent (${dispute.id}).`,
    });
    // Another card is not touched.
    const other = await ctx.charge(1000, "4242424242424242");
    expect((await signalsOf(ctx, other.fraud_evaluation_id)).map((r) => r.rule)).not.toContain("disputed_card");
  });

  it("the merchant's 3rd fraudulent dispute in 30 days raises disputed_merchant on its next charges, any card; it wears off", async () => {
    const ctx = await setup();
    const rulesOf = async (c: { fraud_evaluation_id?: string | null }) =>
      (await signalsOf(ctx, c.fraud_evaluation_id)).map((r) => r.rule);
    const disputed: string[] = [];
    for (const card of ["4242424242424242", "5555555555554444"]) {
      const paid = await ctx.charge(1000, card);
      disputed.push((await ctx.open(paid.id, { reason: "fraudulent" })).id);
      ctx.advance(DAY);
    }
    // Two, and one of another reason: not yet.
    await ctx.open((await ctx.charge(1000, "4000056655665556")).id, { reason: "duplicate" });
    expect(await rulesOf(await ctx.charge(1000, "4000002500003155"))).not.toContain("disputed_merchant");
    const third = await ctx.charge(1000, "4000000760000002");
    disputed.push((await ctx.open(third.id, { reason: "fraudulent" })).id);
    // A card the merchant's disputes never saw.
    const next = await ctx.charge(1000, "4000001240000000");
    expect(await signalsOf(ctx, next.fraud_evaluation_id)).toContainEqual({
      rule: "disputed_merchant",
      points: 25,
      reason: `3 charges of this merchant were disputed as fraudulent in the last 30 days, most recently ${disputed[2]}.`,
    });
    // Another merchant is not touched.
    const other = await ctx.domain.merchants.create(ctx.sandbox, { name: "Other shop" });
    const token = await ctx.domain.tokens.create(ctx.sandbox, {
      card: "4000001240000000",
      holder: "Ada",
      exp_month: 12,
      exp_year: 2031,
    });
    const elsewhere = await ctx.domain.charges.create(ctx.sandbox, {
      merchant_id: other.id,
      amount: 1000,
      currency: "USD",
      payment_method: { type: "card", token: token.id },
    });
    expect(await rulesOf(elsewhere)).not.toContain("disputed_merchant");
    // 30 days after the first, two remain in the window: the signal is gone.
    ctx.advance(29 * DAY);
    expect(await rulesOf(await ctx.charge(1000, "4000001240000000"))).not.toContain("disputed_merchant");
  });
});
