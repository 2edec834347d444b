import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import { merchantAccount, platformAccount } from "./accounts.ts";
import { postPosting } from "./postings.ts";
import type { LedgerEntryDoc } from "./records.ts";
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
    // Sandbox credits are available at once: no pending credit, so no entry (postings.ts isPendingCredit).
    expect(report).toMatchObject({ postings: 4, entries: 0, balances: 1 });
    expect(Object.fromEntries([...report.totals].filter(([, v]) => v !== 0))).toEqual({
      [`test USD merchant:${merchantId}:available`]: 1500,
      "test USD acquirer:clearing": -2500,
      "test USD cashouts:paid_out": 1000,
    });
  });

  it("reports a balance that is not the sum of its account's lines", async () => {
    await t.store.update("balances", `${merchantId}:USD`, { inc: { available: -1 } });
    expect((await verifyLedger(t.store)).differences).toEqual([
      `balance ${merchantId}:USD: available is 1499, its account's lines add up to 1500`,
    ]);
  });

  /** Every line of every posting also as an entry, as releases before issue 36 wrote them. */
  async function entriesAsBefore(): Promise<LedgerEntryDoc[]> {
    const written: LedgerEntryDoc[] = [];
    for (const p of await t.store.findAll("postings", {}, 100)) {
      for (const [i, line] of p.lines.entries()) {
        const merchant = line.account.startsWith("merchant:");
        const entry: LedgerEntryDoc = {
          id: `le_${p.id.slice(4, 26)}${i}0`,
          livemode: p.livemode,
          created_at: p.created_at,
          posting_id: p.id,
          account: line.account,
          merchant_id: merchant ? merchantId : null,
          currency: p.currency,
          bucket: merchant ? "available" : null,
          amount: line.amount,
          type: p.type,
          source_id: p.source_id,
          available_on: null,
          settled: null,
          drawn: null,
        };
        await t.store.insert("ledger_entries", entry);
        written.push(entry);
      }
    }
    return written;
  }

  it("reads a database whose entries copy every line (written before issue 36): nothing to report", async () => {
    const old = await entriesAsBefore();
    const report = await verifyLedger(t.store);
    expect(report.differences).toEqual([]);
    expect(report.entries).toBe(old.length);
    expect(report.totals.get("test USD acquirer:clearing")).toBe(-2500);
  });

  it("reports an entry that is not one of its posting's lines, and a pending credit without its entry", async () => {
    const [copy] = (await entriesAsBefore()).filter((e) => e.account === "acquirer:clearing" && e.type === "capture");
    await t.store.update("ledger_entries", copy?.id ?? "", { set: { amount: -2999 } });
    // A production capture whose credit waits in `pending` (its entry then deleted by hand).
    await t.store.transaction(async (tx) => {
      const { posting, entries } = await postPosting(tx, t.domain.clock, {
        livemode: false,
        currency: "USD",
        type: "capture",
        sourceId: "tx_pendingcredit0000000000",
        lines: [
          { account: platformAccount("acquirer:clearing"), amount: -700 },
          { account: merchantAccount(merchantId, "pending"), amount: 700, availableOn: "2026-12-01T00:00:00.000000Z" },
        ],
      });
      expect(entries).toHaveLength(1);
      await tx.delete("ledger_entries", entries[0]?.id ?? "");
      return posting;
    });
    const differences = (await verifyLedger(t.store)).differences.join("\n");
    expect(differences).toContain("entries [acquirer:clearing -2999] are not among its lines");
    expect(differences).toContain(
      `(capture of tx_pendingcredit0000000000): its pending credit [merchant:${merchantId}:pending 700] has no entry, so it would never settle`,
    );
  });

  it("reports a posting that does not balance, and accounts that no longer add up to zero", async () => {
    const [posting] = await t.store.findAll("postings", { type: "refund" });
    const id = posting?.id ?? "";
    const lines = [...(posting?.lines.slice(0, -1) ?? []), { account: "acquirer:clearing", amount: 501 }];
    await t.store.update("postings", id, { set: { lines } });
    const { differences } = await verifyLedger(t.store);
    expect(differences).toContain(
      `posting ${id} (refund of ${posting?.source_id}) does not balance: its lines add up to 1`,
    );
    expect(differences).toContain("all accounts (test USD) add up to 1, not 0");
    expect(differences).toContain(
      "test USD acquirer:clearing is -2499; the cashouts, charges and disputes it stands for say -2500",
    );
  });

  it("reports an entry without a posting, or naming one that does not exist", async () => {
    const [entry, other] = (await entriesAsBefore()).filter((e) => e.type === "capture");
    await t.store.update("ledger_entries", entry?.id ?? "", { set: { posting_id: null } });
    await t.store.update("ledger_entries", other?.id ?? "", { set: { posting_id: "txn_gone" } });
    const { differences } = await verifyLedger(t.store);
    expect(differences).toContain(`entry ${entry?.id} (capture of ${chargeId}) belongs to no posting`);
    expect(differences).toContain("entries name posting txn_gone, which does not exist");
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
      `balance ${merchantId}:USD: its available lines add up to 1500, the balance transactions waiting for a cashout to 2000`,
      `cashout ${cashout?.id} of 1000: its balance transactions add up to ${1000 - (paid?.net ?? 0)}`,
    ]);
  });
});
