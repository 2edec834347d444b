import { afterEach, describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import { charge as serializeCharge } from "../charges/serialize.ts";
import type { FeeSchedule } from "./fees.ts";
import { verifyLedger } from "./verify.ts";

// Fees on real charges (docs/money.md "Fees"): taken at capture on what was captured, posted to the
// platform's revenue, shown on the charge as `fee` and `net`, not returned by refunds; a charge keeps the
// rate it was made with when the schedule changes.

const SCHEDULE: FeeSchedule = { card: { percent_bps: 290, fixed: { USD: 30 } }, pix: { percent_bps: 100, fixed: {} } };
let t: ReturnType<typeof testDomain>;
afterEach(async () => {
  await t.store.close();
});

async function world(fees: FeeSchedule = SCHEDULE, store?: ReturnType<typeof testDomain>["store"]) {
  const domain = testDomain({ fees, store, settlementDelaySeconds: 2 * 86_400 });
  const c = domain.caller(true);
  const merchant = await domain.domain.merchants.create(c, { name: "Fees" });
  const token = await domain.domain.tokens.create(c, {
    card: "4242424242424242",
    holder: "F",
    exp_month: 12,
    exp_year: 2031,
  });
  const charge = (amount: number, capture = true) =>
    domain.domain.charges.create(c, {
      merchant_id: merchant.id,
      amount,
      currency: "USD",
      payment_method: { type: "card", token: token.id },
      capture,
    });
  const balance = async () => {
    const b = await domain.store.get("balances", `${merchant.id}:USD`);
    return { available: b?.available, pending: b?.pending };
  };
  return { ...domain, c, merchant, token, charge, balance };
}

describe("fees on charges", () => {
  it("takes the fee at capture: the merchant is credited the net, the fee is revenue, the charge shows both", async () => {
    const w = await world();
    t = w;
    const authorized = await w.charge(1000, false);
    expect(serializeCharge(authorized)).toMatchObject({ fee: 0, net: 0 });
    const captured = await w.domain.charges.capture(w.c, authorized.id);
    expect(serializeCharge(captured)).toMatchObject({ amount_captured: 1000, fee: 59, net: 941 });
    expect(await w.balance()).toEqual({ available: 0, pending: 941 });
    const [posting] = await w.store.findAll("postings", { source_id: authorized.id });
    expect(posting).toMatchObject({ type: "capture", fee: 59 });
    expect(posting?.lines.map((l) => [l.account.replace(/mch_\w+/, "mch"), l.amount])).toEqual([
      ["acquirer:clearing", -1000],
      ["merchant:mch:pending", 941],
      ["platform:fee_revenue", 59],
    ]);
    // A partial capture pays on what was captured.
    const partial = await w.charge(5000, false);
    expect(serializeCharge(await w.domain.charges.capture(w.c, partial.id, 2000))).toMatchObject({
      fee: 88,
      net: 1912,
    });
    const report = await verifyLedger(w.store);
    expect(report.differences).toEqual([]);
    expect(report.totals.get("live USD platform:fee_revenue")).toBe(59 + 88);
  });

  it("does not return the fee on a refund: the whole amount comes back out of the merchant's balance", async () => {
    const w = await world();
    t = w;
    await w.charge(10_000); // other money in the balance: 9,680 pending
    const charge = await w.charge(1000);
    w.advance(3 * 86_400);
    await w.domain.jobs.settle();
    expect(await w.balance()).toEqual({ available: 9680 + 941, pending: 0 });
    const refunded = await w.domain.charges.refund(w.c, charge.id, {});
    expect(refunded.amount).toBe(1000);
    expect(await w.balance()).toEqual({ available: 9680 + 941 - 1000, pending: 0 });
    expect(serializeCharge(await w.domain.charges.get(w.c, charge.id))).toMatchObject({
      fee: 59,
      net: 941,
      amount_refunded: 1000,
    });
    expect((await verifyLedger(w.store)).differences).toEqual([]);
  });

  it("keeps the rate a charge was made with when the schedule changes: only new charges pay the new one", async () => {
    const before = await world();
    t = before;
    const made = await before.charge(1000, false);
    // The same store, restarted with a new schedule.
    const after = testDomain({
      store: before.store,
      vaultKeys: before.vaultKeys,
      fees: { card: { percent_bps: 500, fixed: {} } },
      now: before.now,
    });
    const captured = await after.domain.charges.capture(before.c, made.id);
    expect(serializeCharge(captured)).toMatchObject({ fee: 59, net: 941 });
    const fresh = await after.domain.charges.create(before.c, {
      merchant_id: before.merchant.id,
      amount: 1000,
      currency: "USD",
      payment_method: { type: "card", token: before.token.id },
    });
    expect(serializeCharge(fresh)).toMatchObject({ fee: 50, net: 950 });
  });

  it("charges nothing by default (no schedule), as before fees existed", async () => {
    const w = await world({});
    t = w;
    expect(serializeCharge(await w.charge(1000))).toMatchObject({ fee: 0, net: 1000 });
    expect(await w.balance()).toEqual({ available: 0, pending: 1000 });
  });
});
