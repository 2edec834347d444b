import { describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import type { Caller } from "../kernel/caller.ts";
import { DomainError } from "../kernel/errors.ts";
import { merchantLinesOf } from "../ledger/lines.fixture.ts";

// Refunds in production before settlement (createRefund in spec/resources/charges.tsp): a refund draws
// first on the charge's own capture credit still waiting in `pending`, then on `available`; settlement
// later moves only what is left of the credit. Every bucket stays non-negative and equal to the sum
// of its ledger entries. Runs on the real use cases with a clock the test moves.

const DAY = 86_400;

async function setup(settlementDelaySeconds = 2 * DAY) {
  const ctx = testDomain({ settlementDelaySeconds });
  const live: Caller = ctx.caller(true);
  const merchant = await ctx.domain.merchants.create(live, { name: "Live shop" });
  const token = await ctx.domain.tokens.create(live, {
    card: "4242424242424242",
    holder: "Ada",
    exp_month: 12,
    exp_year: 2031,
  });
  const charge = (amount: number) =>
    ctx.domain.charges.create(live, {
      merchant_id: merchant.id,
      amount,
      currency: "USD",
      payment_method: { type: "card", token: token.id },
    });
  const balance = async () => {
    const [b] = await ctx.store.findAll("balances", { merchant_id: merchant.id });
    const postings = await ctx.store.findAll("postings", { merchant_id: merchant.id }, 10_000);
    const lines = merchantLinesOf(postings, merchant.id);
    const sum = (bucket: string) => lines.filter((e) => e.bucket === bucket).reduce((s, e) => s + e.amount, 0);
    // The invariant every movement keeps: a bucket is the sum of its postings' lines, never negative.
    expect(b?.available).toBe(sum("available"));
    expect(b?.pending).toBe(sum("pending"));
    expect(b?.available).toBeGreaterThanOrEqual(0);
    expect(b?.pending).toBeGreaterThanOrEqual(0);
    return { available: b?.available, pending: b?.pending };
  };
  return { ...ctx, live, merchant, charge, balance };
}

describe("refunds before settlement", () => {
  it("draws a same-day refund from the charge's own pending credit", async () => {
    const { domain, live, charge, balance } = await setup();
    const tx = await charge(4000);
    expect(await balance()).toEqual({ available: 0, pending: 4000 });
    await domain.charges.refund(live, tx.id, { amount: 1500 });
    expect(await balance()).toEqual({ available: 0, pending: 2500 });
    await domain.charges.refund(live, tx.id, { amount: 2500 });
    expect(await balance()).toEqual({ available: 0, pending: 0 });
    expect((await domain.charges.get(live, tx.id)).status).toBe("refunded");
  });

  it("settles only what refunds left of the credit, once", async () => {
    const { domain, live, charge, balance, advance } = await setup();
    const tx = await charge(4000);
    await domain.charges.refund(live, tx.id, { amount: 1000 });
    advance(2 * DAY - 1);
    expect(await domain.jobs.settle()).toBe(0); // not yet due
    advance(1);
    expect(await domain.jobs.settle()).toBe(1);
    expect(await domain.jobs.settle()).toBe(0);
    expect(await balance()).toEqual({ available: 3000, pending: 0 });
    // After settlement a refund comes from `available`.
    await domain.charges.refund(live, tx.id, { amount: 500 });
    expect(await balance()).toEqual({ available: 2500, pending: 0 });
  });

  it("settles nothing into available when refunds took the whole credit", async () => {
    const { domain, live, charge, balance, advance } = await setup();
    const tx = await charge(4000);
    await domain.charges.refund(live, tx.id, {});
    advance(2 * DAY);
    expect(await domain.jobs.settle()).toBe(1);
    expect(await balance()).toEqual({ available: 0, pending: 0 });
  });

  it("never draws on another charge's pending credit: a refund the credit cannot cover comes from available", async () => {
    const { domain, live, charge, balance, advance } = await setup();
    const settledEarlier = await charge(1000);
    advance(2 * DAY);
    await domain.jobs.settle();
    expect(await balance()).toEqual({ available: 1000, pending: 0 });
    const fresh = await charge(3000);
    // `fresh`'s credit is pending; `settledEarlier`'s refund must come from available, not from it.
    await domain.charges.refund(live, settledEarlier.id, { amount: 600 });
    expect(await balance()).toEqual({ available: 400, pending: 3000 });
    await domain.charges.refund(live, fresh.id, { amount: 3000 });
    expect(await balance()).toEqual({ available: 400, pending: 0 });
  });

  it("refuses a refund neither the credit nor available covers (422), writing nothing", async () => {
    const { domain, live, charge, balance, advance, store, merchant } = await setup();
    const tx = await charge(1000);
    advance(2 * DAY);
    await domain.jobs.settle();
    // Spend the available funds outside this charge (as a cashout will), then refund.
    const [b] = await store.findAll("balances", { merchant_id: merchant.id });
    await store.update("balances", b?.id ?? "", { set: { available: 0 } });
    await store.insert("postings", {
      id: "txn_spent",
      livemode: true,
      created_at: new Date().toISOString(),
      type: "refund",
      currency: "USD",
      source_id: "elsewhere",
      merchant_id: merchant.id,
      lines: [
        { account: `merchant:${merchant.id}:available`, amount: -1000 },
        { account: "acquirer:clearing", amount: 1000 },
      ],
      fee: 0,
    });
    const err = await domain.charges.refund(live, tx.id, { amount: 100 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe("insufficient_balance");
    expect((await domain.charges.get(live, tx.id)).amount_refunded).toBe(0);
    expect(await store.findAll("refunds", { charge_id: tx.id })).toHaveLength(0);
    expect(await balance()).toEqual({ available: 0, pending: 0 });
  });

  it("keeps concurrent refunds and settlement of one credit exact", async () => {
    const { domain, live, charge, balance, advance } = await setup();
    const tx = await charge(10_000);
    advance(2 * DAY);
    const results = await Promise.allSettled([
      ...Array.from({ length: 30 }, () => domain.charges.refund(live, tx.id, { amount: 500 })),
      domain.jobs.settle(),
    ]);
    const refunded = results.slice(0, 30).filter((r) => r.status === "fulfilled").length;
    expect(refunded).toBe(20); // 20 × 500 = the whole capture, whichever bucket each came from
    expect(await balance()).toEqual({ available: 0, pending: 0 });
  });
});
