import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import { verifyLedger } from "./verify.ts";

// verifyLedger (`npm run admin -- ledger verify`): nothing to report after real movements; each kind of
// damage reported in words.

let t: ReturnType<typeof testDomain>;
let merchantId: string;
let chargeId: string;

beforeEach(async () => {
  t = testDomain();
  const c = t.caller();
  merchantId = (await t.domain.merchants.create(c, { name: "Verify" })).id;
  const token = await t.domain.tokens.create(c, {
    card: "4242424242424242",
    holder: "V",
    exp_month: 12,
    exp_year: 2031,
  });
  const charge = await t.domain.charges.create(c, {
    merchant_id: merchantId,
    amount: 3000,
    currency: "USD",
    payment_method: { type: "card", token: token.id },
  });
  chargeId = charge.id;
  await t.domain.charges.refund(c, charge.id, { amount: 500 });
  const cashout = await t.domain.cashouts.create(c, {
    merchant_id: merchantId,
    amount: 1000,
    currency: "USD",
    destination: {
      type: "us_bank_account",
      routing_number: "110000000",
      account_number: "000123456789",
      account_holder: "V",
    },
  });
  await t.domain.cashouts.sandboxPay(c, cashout.id);
});
afterEach(async () => {
  await t.store.close();
});

describe("verifyLedger", () => {
  it("finds nothing wrong after captures, refunds and a paid cashout, and reports each account's total", async () => {
    const report = await verifyLedger(t.store);
    expect(report.differences).toEqual([]);
    expect(report).toMatchObject({ postings: 4, entries: 8, balances: 1 });
    expect(Object.fromEntries([...report.totals].filter(([, v]) => v !== 0))).toEqual({
      [`test USD merchant:${merchantId}:available`]: 1500,
      "test USD acquirer:clearing": -2500,
      "test USD cashouts:paid_out": 1000,
    });
  });

  it("reports a balance that is not the sum of its entries", async () => {
    await t.store.update("balances", `${merchantId}:USD`, { inc: { available: -1 } });
    expect((await verifyLedger(t.store)).differences).toEqual([
      `balance ${merchantId}:USD: available is 1499, its entries add up to 1500`,
    ]);
  });

  it("reports a posting that does not balance, or whose lines are not its entries", async () => {
    const [posting] = await t.store.findAll("postings", { type: "refund" });
    const id = posting?.id ?? "";
    const lines = [...(posting?.lines.slice(0, -1) ?? []), { account: "acquirer:clearing", amount: 501 }];
    await t.store.update("postings", id, { set: { lines } });
    const { differences } = await verifyLedger(t.store);
    expect(differences).toContain(
      `posting ${id} (refund of ${posting?.source_id}) does not balance: its lines add up to 1`,
    );
    expect(differences.some((d) => d.startsWith(`posting ${id}: its lines`))).toBe(true);
  });

  it("reports an entry without a posting, and accounts that no longer add up to zero", async () => {
    const [entry] = await t.store.findAll("ledger_entries", { account: "acquirer:clearing", type: "capture" });
    await t.store.update("ledger_entries", entry?.id ?? "", { set: { posting_id: null } });
    const { differences } = await verifyLedger(t.store);
    expect(differences).toContain(`entry ${entry?.id} (capture of ${chargeId}) belongs to no posting`);
    expect(differences).toContain("all accounts (test USD) add up to 3000, not 0");
    expect(differences).toContain(
      "test USD acquirer:clearing is 500; the cashouts, charges and disputes it stands for say -2500",
    );
  });

  it("reports a paid cashout the ledger still holds in transit", async () => {
    const [paid] = await t.store.findAll("postings", { type: "cashout_paid" });
    await t.store.delete("postings", paid?.id ?? "");
    await t.store.deleteMany("ledger_entries", { posting_id: paid?.id ?? "" });
    const { differences } = await verifyLedger(t.store);
    expect(differences).toContain(
      "test USD cashouts:in_transit is 1000; the cashouts, charges and disputes it stands for say 0",
    );
    expect(differences).toContain(
      "test USD cashouts:paid_out is 0; the cashouts, charges and disputes it stands for say 1000",
    );
  });
  it("reports a posting without its balance transaction, a queue that is not the available balance, a cashout whose contents are not its amount", async () => {
    const [refund] = await t.store.findAll("balance_transactions", { type: "refund" });
    await t.store.delete("balance_transactions", refund?.id ?? "");
    const [cashout] = await t.store.findAll("cashouts", {});
    const [paid] = await t.store.findAll("balance_transactions", { cashout_id: cashout?.id ?? "" });
    await t.store.update("balance_transactions", paid?.id ?? "", { set: { cashout_id: null } });
    expect((await verifyLedger(t.store)).differences).toEqual([
      `posting ${refund?.id} moves a merchant's money but has no balance transaction`,
      `balance ${merchantId}:USD: its available entries add up to 1500, the balance transactions waiting for a cashout to 2000`,
      `cashout ${cashout?.id} of 1000: its balance transactions add up to ${1000 - (paid?.net ?? 0)}`,
    ]);
  });
});
