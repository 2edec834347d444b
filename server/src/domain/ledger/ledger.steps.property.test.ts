import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import type { DestinationInput } from "../cashouts/destinations.ts";
import { DomainError } from "../kernel/errors.ts";
import { feeFor } from "./fees.ts";
import { verifyLedger } from "./verify.ts";

// The ledger's invariants after every single step (issue 30): random sequences of charges (captured at
// once or later), captures, voids, refunds, settlements (the clock moves, the job runs), cashouts (paid,
// failed, canceled), cancels and disputes (chargebacks and inquiries opened, evidence submitted, accepted,
// decided, escalated, deadlines passed; issue 31), in production (captures wait in `pending`) and in the
// sandbox, with every invariant checked after each step:
// - verifyLedger finds no difference (postings balance, pending credits have their entries, each balance is
//   the sum of its account's lines and not negative unless a chargeback overdrew it, all accounts add up to zero, in
//   transit / paid out / acquirer clearing agree with the cashouts, charges and disputes);
// - money is conserved: what a merchant holds is what it captured, less refunds, live cashouts, the
//   amounts of chargebacks not won and every dispute fee;
// - reconciliation: each cashout's balance transactions add up to its amount exactly, and the queue of
//   transactions no cashout took yet adds up to the available balance.
// 100 runs of 100 steps: 10,000 steps, each followed by the full check.

const RUNS = 100;
const STEPS = 100;
const DAY = 86_400;
const usd: DestinationInput = {
  type: "us_bank_account",
  routing_number: "110000000",
  account_number: "000123456789",
  account_holder: "Steps",
};
const closed: DestinationInput = { ...usd, account_number: "000111111113" };

type Step =
  | { kind: "charge"; live: boolean; merchant: number; currency: "USD" | "JPY"; amount: number; capture: boolean }
  | { kind: "capture"; pick: number; fraction: number }
  | { kind: "void"; pick: number }
  | { kind: "refund"; pick: number; amount: number | undefined }
  | { kind: "settle"; hours: number }
  | { kind: "cashout"; live: boolean; merchant: number; amount: number; fails: boolean }
  | { kind: "cancel"; pick: number }
  | { kind: "payouts"; hours: number }
  | { kind: "dispute"; pick: number; inquiry: boolean }
  | { kind: "respond"; pick: number; accept: boolean }
  | { kind: "decide"; pick: number; won: boolean }
  | { kind: "deadline"; days: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("charge" as const),
      live: fc.boolean(),
      merchant: fc.nat(1),
      currency: fc.constantFrom("USD" as const, "JPY" as const),
      amount: fc.integer({ min: 1, max: 5000 }),
      capture: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("capture" as const),
      pick: fc.nat(1000),
      fraction: fc.integer({ min: 1, max: 100 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("void" as const), pick: fc.nat(1000) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("refund" as const),
      pick: fc.nat(1000),
      amount: fc.option(fc.integer({ min: 1, max: 3000 }), { nil: undefined }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("settle" as const), hours: fc.integer({ min: 1, max: 60 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("cashout" as const),
      live: fc.boolean(),
      merchant: fc.nat(1),
      amount: fc.integer({ min: 1, max: 6000 }),
      fails: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("cancel" as const), pick: fc.nat(1000) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("payouts" as const), hours: fc.integer({ min: 1, max: 48 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("dispute" as const), pick: fc.nat(1000), inquiry: fc.boolean() }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("respond" as const), pick: fc.nat(1000), accept: fc.boolean() }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("decide" as const), pick: fc.nat(1000), won: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("deadline" as const), days: fc.integer({ min: 1, max: 8 }) }) },
);

async function setup() {
  // Card fees on USD (percentage and fixed) and JPY (percentage only), so captures credit their net.
  const t = testDomain({
    settlementDelaySeconds: 2 * DAY,
    cashoutPendingSeconds: 3600,
    cashoutTransitSeconds: DAY,
    disputeFees: { USD: 150, JPY: 15 },
    fees: { card: { percent_bps: 290, fixed: { USD: 30 } } },
  });
  const merchants: Record<"live" | "test", string[]> = { live: [], test: [] };
  const tokens: Record<"live" | "test", string> = { live: "", test: "" };
  for (const live of [true, false]) {
    const c = t.caller(live);
    const env = live ? "live" : "test";
    for (let i = 0; i < 2; i++) merchants[env].push((await t.domain.merchants.create(c, { name: `m${i}` })).id);
    tokens[env] = (
      await t.domain.tokens.create(c, { card: "4242424242424242", holder: "S", exp_month: 12, exp_year: 2031 })
    ).id;
  }
  return {
    ...t,
    merchants,
    tokens,
    charges: [] as { id: string; live: boolean }[],
    cashouts: [] as { id: string; live: boolean }[],
    disputes: [] as { id: string; live: boolean }[],
  };
}
type World = Awaited<ReturnType<typeof setup>>;

/** How many steps of each kind succeeded, over every run: each kind must have, or the test proves little. */
const succeeded = new Map<Step["kind"], number>();

async function attempt(w: World, s: Step): Promise<void> {
  try {
    await perform(w, s);
    succeeded.set(s.kind, (succeeded.get(s.kind) ?? 0) + 1);
  } catch (err) {
    // Refusals (409 transitions, 422 insufficient balance, 400 amounts) are expected outcomes.
    if (!(err instanceof DomainError) || err.code === "internal_error") throw err;
  }
}

async function perform(w: World, s: Step): Promise<void> {
  const { domain } = w;
  const picked = <T>(list: T[], i: number) => list[i % Math.max(list.length, 1)];
  switch (s.kind) {
    case "charge": {
      const env = s.live ? "live" : "test";
      const charge = await domain.charges.create(w.caller(s.live), {
        merchant_id: w.merchants[env][s.merchant] ?? "",
        amount: s.amount,
        currency: s.currency,
        payment_method: { type: "card", token: w.tokens[env] },
        capture: s.capture,
      });
      w.charges.push({ id: charge.id, live: s.live });
      return;
    }
    case "capture": {
      const ch = picked(w.charges, s.pick);
      if (!ch) return;
      const charge = await domain.charges.get(w.caller(ch.live), ch.id);
      await domain.charges.capture(
        w.caller(ch.live),
        ch.id,
        Math.max(1, Math.floor((charge.amount * s.fraction) / 100)),
      );
      return;
    }
    case "void": {
      const ch = picked(w.charges, s.pick);
      if (ch) await domain.charges.void(w.caller(ch.live), ch.id);
      return;
    }
    case "refund": {
      const ch = picked(w.charges, s.pick);
      if (ch) await domain.charges.refund(w.caller(ch.live), ch.id, { amount: s.amount });
      return;
    }
    case "settle":
      w.advance(s.hours * 3600);
      await domain.jobs.settle();
      return;
    case "cashout": {
      const env = s.live ? "live" : "test";
      const cashout = await domain.cashouts.create(w.caller(s.live), {
        merchant_id: w.merchants[env][s.merchant] ?? "",
        amount: s.amount,
        currency: "USD",
        destination: s.fails ? closed : usd,
      });
      w.cashouts.push({ id: cashout.id, live: s.live });
      return;
    }
    case "cancel": {
      const co = picked(w.cashouts, s.pick);
      if (co) await domain.cashouts.cancel(w.caller(co.live), co.id);
      return;
    }
    case "payouts":
      w.advance(s.hours * 3600);
      await domain.jobs.payouts();
      return;
    case "dispute": {
      // Opened as the acquirer would (issue 32): in production too, not through the sandbox helper.
      const ch = picked(w.charges, s.pick);
      if (!ch) return;
      const dispute = await domain.disputes.open(null, ch.live, ch.id, { inquiry: s.inquiry });
      w.disputes.push({ id: dispute.id, live: ch.live });
      return;
    }
    case "respond": {
      const dp = picked(w.disputes, s.pick);
      if (!dp) return;
      if (s.accept) await domain.disputes.close(w.caller(dp.live), dp.id);
      else await domain.disputes.update(w.caller(dp.live), dp.id, { evidence: { customer_name: "S" }, submit: true });
      return;
    }
    case "decide": {
      const dp = picked(w.disputes, s.pick);
      if (dp) await domain.disputes.resolve(null, dp.live, dp.id, s.won ? "won" : "lost");
      return;
    }
    case "deadline":
      w.advance(s.days * DAY);
      await domain.jobs.expireDisputes();
      return;
  }
}

async function checkEveryInvariant(w: World): Promise<void> {
  const report = await verifyLedger(w.store);
  expect(report.differences).toEqual([]);
  // Conservation, from the objects alone: each balance is captures less fees, refunds and cashouts still out.
  const held = new Map<string, number>();
  const add = (key: string, n: number) => held.set(key, (held.get(key) ?? 0) + n);
  for (const c of await w.store.findAll("charges", {}, 10_000))
    add(
      `${c.merchant_id}:${c.currency}`,
      c.amount_captured - feeFor(c.fee_rate, c.amount_captured) - c.amount_refunded,
    );
  for (const c of await w.store.findAll("cashouts", {}, 10_000)) {
    if (c.status !== "failed" && c.status !== "canceled") add(`${c.merchant_id}:${c.currency}`, -c.amount);
  }
  for (const d of await w.store.findAll("disputes", {}, 10_000)) {
    const taken = d.status === "needs_response" || d.status === "under_review" || d.status === "lost";
    add(`${d.merchant_id}:${d.currency}`, -(taken ? d.amount : 0) - d.fee);
  }
  for (const b of await w.store.findAll("balances", {}, 10_000)) {
    expect(b.available + b.pending).toBe(held.get(b.id) ?? 0);
  }
  // Reconciliation (reconciliation.ts): each cashout's balance transactions add up to its amount exactly,
  // none of them is the history's adjustment (all money here came through postings), and what waits for
  // the next cashouts adds up to each available balance.
  const transactions = await w.store.findAll("balance_transactions", {}, 100_000);
  const paidOut = new Map<string, number>();
  const queued = new Map<string, number>();
  for (const t of transactions) {
    if (t.cashout_id !== null) paidOut.set(t.cashout_id, (paidOut.get(t.cashout_id) ?? 0) + t.net);
    if (t.reconcile_at !== null) {
      const key = `${t.merchant_id}:${t.currency}`;
      queued.set(key, (queued.get(key) ?? 0) + t.net);
    }
    expect(t.type === "adjustment" && t.source_id.startsWith("co_"), `history adjustment ${t.id}`).toBe(false);
  }
  for (const c of await w.store.findAll("cashouts", {}, 10_000)) {
    expect(paidOut.get(c.id), `cashout ${c.id}`).toBe(c.amount);
  }
  for (const b of await w.store.findAll("balances", {}, 10_000)) {
    expect(queued.get(b.id) ?? 0, `queue of ${b.id}`).toBe(b.available);
  }
}

describe("ledger invariants after every step (fast-check, 10,000 steps)", () => {
  it(`hold after each of ${RUNS} × ${STEPS} random charges, captures, refunds, settlements, cashouts, cancels and disputes`, async () => {
    let steps = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: STEPS, maxLength: STEPS }), async (sequence) => {
        const w = await setup();
        try {
          for (const s of sequence) {
            await attempt(w, s);
            await checkEveryInvariant(w);
            steps++;
          }
        } finally {
          await w.store.close();
        }
      }),
      { numRuns: RUNS },
    );
    expect(steps).toBeGreaterThanOrEqual(10_000);
    // Every kind of step moved money (or state) many times, not only refusals.
    const kinds = ["charge", "capture", "void", "refund", "settle", "cashout", "cancel", "payouts"] as const;
    for (const kind of [...kinds, "dispute", "respond", "decide", "deadline"] as const) {
      expect(succeeded.get(kind) ?? 0, kind).toBeGreaterThan(50);
    }
  }, 600_000);
});
