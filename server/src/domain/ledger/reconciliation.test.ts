import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import type { DestinationInput } from "../cashouts/destinations.ts";

// Reconciliation (reconciliation.ts, docs/money.md "Reconciling a cashout"): first in, first out, a split
// by an adjustment pair, exact sums; in production, where captures wait in `pending` and settle.

const DAY = 86_400;
const usd: DestinationInput = {
  type: "us_bank_account",
  routing_number: "110000000",
  account_number: "000123456789",
  account_holder: "Reconciled",
};
const closed: DestinationInput = { ...usd, account_number: "000111111113" };

let t: ReturnType<typeof testDomain>;
let merchant: string;
let token: string;
let livemode = true;
const live = () => t.caller(livemode);

beforeEach(async () => {
  livemode = true;
  t = testDomain({ settlementDelaySeconds: 2 * DAY, fees: { card: { percent_bps: 290, fixed: { USD: 30 } } } });
  merchant = (await t.domain.merchants.create(live(), { name: "Recon" })).id;
  token = (
    await t.domain.tokens.create(live(), { card: "4242424242424242", holder: "R", exp_month: 12, exp_year: 2031 })
  ).id;
});
afterEach(() => t.store.close());

const charge = async (amount: number) => {
  const made = await t.domain.charges.create(live(), {
    merchant_id: merchant,
    amount,
    currency: "USD",
    payment_method: { type: "card", token },
    capture: true,
  });
  t.advance(1);
  return made;
};
const cashout = async (amount: number, destination = usd) => {
  const made = await t.domain.cashouts.create(live(), { merchant_id: merchant, amount, currency: "USD", destination });
  t.advance(1);
  return made;
};
const contents = async (cashoutId: string) =>
  (
    await t.store.findAll("balance_transactions", { cashout_id: cashoutId }, 1000, {
      by: "created_at",
      direction: "asc",
    })
  )
    .map((x) => [x.type, x.net] as const)
    .sort();
const sum = async (cashoutId: string) =>
  (await t.store.findAll("balance_transactions", { cashout_id: cashoutId }, 1000)).reduce((s, x) => s + x.net, 0);

describe("reconcileCashout", () => {
  it("after charges with fees, a partial refund before settlement and settlement: first in, first out, exact", async () => {
    const a = await charge(10_000); // fee 320, net 9,680
    await charge(5_000); // fee 175, net 4,825
    await t.domain.charges.refund(live(), a.id, { amount: 1_000 }); // drawn from a's pending credit
    // Nothing is available yet: a cashout is refused and allocates nothing.
    await expect(cashout(1)).rejects.toMatchObject({ code: "insufficient_balance" });
    t.advance(2 * DAY);
    expect(await t.domain.jobs.settle()).toBe(2);
    // Available: 8,680 (a's settlement, less its refund) + 4,825 (b's).
    const first = await cashout(8_680);
    expect(await contents(first.id)).toEqual([["settlement", 8_680]]);
    const second = await cashout(3_000);
    // b's settlement (4,825) is split: −1,825 stays with this cashout, +1,825 waits for the next.
    expect(await contents(second.id)).toEqual([
      ["adjustment", -1_825],
      ["settlement", 4_825],
    ]);
    const third = await cashout(1_825);
    expect(await contents(third.id)).toEqual([["adjustment", 1_825]]);
    for (const c of [first, second, third]) expect(await sum(c.id)).toBe(c.amount);
    // The charges' own transactions are available now, and belong to no cashout (their settlements do).
    const charges = await t.store.findAll("balance_transactions", { type: "charge" });
    expect(charges.map((x) => [x.status, x.cashout_id])).toEqual([
      ["available", null],
      ["available", null],
    ]);
    // The cashout.reconciled event says how many transactions each cashout paid out.
    const events = await t.store.findAll("events", { type: "cashout.reconciled" }, 10, {
      by: "created_at",
      direction: "asc",
    });
    expect(events.map((e) => e.payload.balance_transaction_count)).toEqual([1, 2, 1]);
  });

  it("a refund from available takes part in the order; a failed cashout's money comes back as its reversal", async () => {
    // In the sandbox (no settlement delay: captures are available at once; cashouts can be failed).
    t.store.close();
    t = testDomain({ fees: { card: { percent_bps: 290, fixed: { USD: 30 } } } });
    livemode = false;
    merchant = (await t.domain.merchants.create(live(), { name: "Recon" })).id;
    token = (
      await t.domain.tokens.create(live(), { card: "4242424242424242", holder: "R", exp_month: 12, exp_year: 2031 })
    ).id;
    const a = await charge(10_000); // 9,680 available at once (no settlement delay)
    await charge(2_000); // fee 88, net 1,912
    await t.domain.charges.refund(live(), a.id, { amount: 4_000 });
    // Order: +9,680, +1,912, −4,000: a cashout of 7,592 takes all three (9,680 ≥ 7,592 first: split).
    const first = await cashout(7_000, closed);
    expect(await contents(first.id)).toEqual([
      ["adjustment", -2_680],
      ["charge", 9_680],
    ]);
    await t.domain.cashouts.sandboxFail(live(), first.id, "account_closed");
    const second = await cashout(7_592);
    // What waited: +2,680 (the split's rest, in the first charge's place), +1,912, −4,000, +7,000 (reversal).
    expect(await contents(second.id)).toEqual([
      ["adjustment", 2_680],
      ["cashout_reversal", 7_000],
      ["charge", 1_912],
      ["refund", -4_000],
    ]);
    expect(await sum(first.id)).toBe(7_000);
    expect(await sum(second.id)).toBe(7_592);
    expect((await t.domain.balances.get(live(), merchant)).rows[0]?.available).toBe(0);
  });

  it("money with no balance transactions (a store written by hand) is one adjustment, so the sum stays exact", async () => {
    const at = t.now().toISOString();
    await t.store.insert("balances", {
      id: `${merchant}:USD`,
      livemode: true,
      created_at: at,
      updated_at: at,
      merchant_id: merchant,
      currency: "USD",
      available: 5_000,
      pending: 0,
    });
    const made = await cashout(1_200);
    const [only] = await t.store.findAll("balance_transactions", { cashout_id: made.id });
    expect(only).toMatchObject({ type: "adjustment", net: 1_200, source_id: made.id });
  });
});
