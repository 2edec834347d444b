import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import type { AppStore, Docs } from "../areas.ts";
import { upgradeLedger } from "./upgrade.ts";
import { verifyLedger } from "./verify.ts";

// The upgrade at open, on the documents of a database the release before double entry made
// (fixtures/release-2026-11.json: its `made_by` commit's code made them, through the domain's use cases:
// captures pending and available, refunds from a pending credit and from available, settlements,
// cashouts paid, canceled, failed and pending, in both environments and four currencies).

type Fixture = { [C in "merchants" | "charges" | "refunds" | "cashouts" | "ledger_entries" | "balances"]: Docs[C][] };
const FIXTURE = JSON.parse(
  readFileSync(new URL("./fixtures/release-2026-11.json", import.meta.url), "utf8"),
) as Fixture & { made_by: string };

let t: ReturnType<typeof testDomain>;
afterEach(async () => {
  await t?.store.close();
});

async function released(): Promise<ReturnType<typeof testDomain>> {
  t = testDomain({ settlementDelaySeconds: 2 * 86_400 });
  for (const name of ["merchants", "charges", "refunds", "cashouts", "ledger_entries", "balances"] as const) {
    for (const doc of FIXTURE[name]) await t.store.insert(name, doc as never);
  }
  return t;
}

const balancesOf = (store: AppStore) => store.findAll("balances", {}, 1000);

describe("upgradeLedger (a single-entry database brought up to double entry at open)", () => {
  it("turns every movement's entries into one balanced posting, keeping every balance and entry", async () => {
    const { store, domain } = await released();
    expect(FIXTURE.made_by).toMatch(/^[0-9a-f]{40}$/);
    const before = await balancesOf(store);
    const unconverted = await verifyLedger(store);
    expect(unconverted.differences.length).toBeGreaterThan(0); // entries without postings, platform accounts missing

    // 27 entries: 8 captures, 4 refunds, 3 settlements (pairs), 7 cashouts, 2 reversals: 24 postings, + 3 paid cashouts.
    expect(await upgradeLedger(store, domain.clock, domain.cashouts)).toBe(27);
    expect(await balancesOf(store)).toEqual(before);
    const report = await verifyLedger(store);
    expect(report.differences).toEqual([]);
    expect(report.postings).toBe(27);
    for (const old of FIXTURE.ledger_entries) {
      expect(await store.get("ledger_entries", old.id)).toMatchObject({
        amount: old.amount,
        bucket: old.bucket,
        settled: old.settled,
        drawn: old.drawn,
        posting_id: expect.stringMatching(/^txn_/),
        account: `merchant:${old.merchant_id}:${old.bucket}`,
      });
    }
    // The live merchant's money: what the acquirer owes for its captures, and its cashouts' whereabouts.
    const live = (account: string) => report.totals.get(`live USD ${account}`);
    expect(live("acquirer:clearing")).toBe(-(10_000 + 4_000 + 2_000 + 7_000 - 1_500 - 3_000 - 2_000));
    expect(live("cashouts:paid_out")).toBe(5_000 + 500);
    expect(live("cashouts:in_transit")).toBe(700);
    // A refund drawn from a pending credit: one posting, from pending, owed back to the acquirer.
    const [refund] = FIXTURE.refunds.filter((r) => r.amount === 1_500);
    const [posting] = await store.findAll("postings", { source_id: refund?.id ?? "" });
    expect(posting?.lines.map((l) => [l.account.replace(/mch_\w+/, "mch"), l.amount])).toEqual([
      ["merchant:mch:pending", -1_500],
      ["acquirer:clearing", 1_500],
    ]);
  });

  it("writes the history's balance transactions and reconciles the past cashouts in the order they were made", async () => {
    const { store, domain } = await released();
    await upgradeLedger(store, domain.clock, domain.cashouts);
    const all = await store.findAll("balance_transactions", {}, 1000, { by: "created_at", direction: "asc" });
    // One per posting that touches a merchant (24: the 3 paid-out postings touch only the platform's
    // accounts), each with its posting's id; the rest are the reconciliation's adjustment pairs.
    const postings = await store.findAll("postings", {}, 1000);
    const ofMerchants = postings.filter((p) => p.merchant_id !== null).map((p) => p.id);
    expect(ofMerchants).toHaveLength(24);
    expect(all.filter((x) => x.type !== "adjustment").map((x) => x.id)).toEqual(expect.arrayContaining(ofMerchants));
    expect(all.filter((x) => x.type !== "adjustment")).toHaveLength(24);
    // The history is listed as a merchant sees new movements: a settled charge is available, one waiting
    // for its settlement date pending; a settlement shows its charge and the credit's date.
    const charge = (amount: number) => FIXTURE.charges.find((c) => c.amount === amount)?.id;
    const of = (source: string | undefined, type: string) => all.find((x) => x.source_id === source && x.type === type);
    expect(of(charge(10_000), "charge")).toMatchObject({
      status: "available",
      net: 10_000,
      available_on: "2026-11-04T09:00:00.000000Z",
    });
    expect(of(charge(7_000), "charge")).toMatchObject({ status: "pending", net: 7_000, reconcile_at: null });
    expect(of(charge(10_000), "settlement")).toMatchObject({ net: 10_000, reconcile_at: null });
    // Every past cashout's contents add up to its amount, from the movements before it, first in first
    // out; none needed the adjustment for unknown history (an adjustment whose source is a cashout).
    const [first] = FIXTURE.cashouts.filter((c) => c.livemode).sort((a, b) => a.created_at.localeCompare(b.created_at));
    const contents = all.filter((x) => x.cashout_id === first?.id).map((x) => [x.type, x.net]);
    // The two credits of 2026-11-04 09:00 (what refunds left of them), then −the excess in the last one's place.
    expect(contents.sort()).toEqual([
      ["adjustment", -7_500],
      ["settlement", 10_000],
      ["settlement", 2_500],
    ]);
    for (const cashout of FIXTURE.cashouts) {
      const sum = all.filter((x) => x.cashout_id === cashout.id).reduce((s, x) => s + x.net, 0);
      expect(sum, cashout.id).toBe(cashout.amount);
    }
    expect(all.filter((x) => x.type === "adjustment" && x.source_id.startsWith("co_"))).toEqual([]);
    // What waits for the next cashout adds up to each available balance (verifyLedger checks it too).
    for (const balance of await balancesOf(store)) {
      const waiting = all
        .filter((x) => x.merchant_id === balance.merchant_id && x.currency === balance.currency && x.reconcile_at)
        .reduce((s, x) => s + x.net, 0);
      expect(waiting, balance.id).toBe(balance.available);
    }
    expect((await verifyLedger(store)).differences).toEqual([]);
  });

  it("splits a refund the release drew from both a pending credit and available into two postings", async () => {
    const { store, domain } = await released();
    // The release's createRefund wrote one entry per bucket: 4,500 from the 7,000 charge's unsettled
    // credit (2,000 drawn already), 500 from available.
    const credit = FIXTURE.ledger_entries.find((e) => e.type === "capture" && e.amount === 7_000);
    const charge = FIXTURE.charges.find((c) => c.id === credit?.source_id);
    if (!credit || !charge) throw new Error("fixture: no 7,000 charge");
    const refundId = "re_0VcCDxUZZZZZZZZZZZZZZZZZ";
    const at = "2026-11-06T10:00:00.000050Z";
    const base = { ...credit, created_at: at, type: "refund" as const, source_id: refundId };
    const entry = { available_on: null, settled: null, drawn: null };
    await store.insert("ledger_entries", {
      ...base,
      ...entry,
      id: "le_0VcCDxUZZZZZZZZZZZZZZZZ1",
      bucket: "pending",
      amount: -4_500,
    });
    await store.insert("ledger_entries", {
      ...base,
      ...entry,
      id: "le_0VcCDxUZZZZZZZZZZZZZZZZ2",
      bucket: "available",
      amount: -500,
    });
    await store.update("ledger_entries", credit.id, { set: { drawn: 6_500 } });
    await store.update("balances", `${credit.merchant_id}:USD`, { inc: { pending: -4_500, available: -500 } });
    await store.update("charges", charge.id, { inc: { amount_refunded: 5_000 } });

    expect(await upgradeLedger(store, domain.clock, domain.cashouts)).toBe(29);
    const refunds = await store.findAll("balance_transactions", { source_id: refundId });
    expect(refunds.map((x) => [x.status, x.net, x.reconcile_at !== null]).sort()).toEqual([
      ["available", -500, true],
      ["pending", -4_500, false],
    ]);
    expect((await verifyLedger(store)).differences).toEqual([]);
  });

  it("does nothing on a database already up to date, and the ledger keeps working after it", async () => {
    const { store, domain, caller } = await released();
    await upgradeLedger(store, domain.clock, domain.cashouts);
    expect(await upgradeLedger(store, domain.clock, domain.cashouts)).toBe(0);
    // The pending credits written by the release settle, and are refunded from, as new ones would.
    expect(await domain.jobs.settle()).toBe(2);
    const [eur] = await store.findAll("balances", { currency: "EUR" });
    expect(eur).toMatchObject({ available: 900, pending: 0 });
    const d = FIXTURE.charges.find((c) => c.amount === 7_000);
    await domain.charges.refund(caller(true), d?.id ?? "", { amount: 1_000 });
    const pending = FIXTURE.cashouts.find((c) => c.status === "pending" && c.livemode);
    await domain.cashouts.cancel(caller(true), pending?.id ?? "");
    // A new cashout takes the front of the queue the history left: no adjustment for unknown history.
    const merchant = FIXTURE.merchants.find((m) => m.livemode);
    const made = await domain.cashouts.create(caller(true), {
      merchant_id: merchant?.id ?? "",
      amount: 3_000,
      currency: "USD",
      destination: {
        type: "us_bank_account",
        routing_number: "110000000",
        account_number: "000123456789",
        account_holder: "Upgraded",
      },
    });
    const contents = await store.findAll("balance_transactions", { cashout_id: made.id });
    expect(contents.reduce((s, x) => s + x.net, 0)).toBe(3_000);
    expect(contents.filter((x) => x.source_id === made.id)).toEqual([]);
    expect((await verifyLedger(store)).differences).toEqual([]);
  });

  it("writes each posting once when two instances upgrade at the same time", async () => {
    const { store, domain } = await released();
    const written = await Promise.all([
      upgradeLedger(store, domain.clock, domain.cashouts),
      upgradeLedger(store, domain.clock, domain.cashouts),
    ]);
    expect(written[0] + written[1]).toBe(27);
    const report = await verifyLedger(store); // also: one balance transaction per posting, each cashout's contents
    expect(report.differences).toEqual([]);
    expect(report.postings).toBe(27);
    expect(
      await store.findAll("balance_transactions", { type: "adjustment", source_id: { $ne: "" } }, 1000),
    ).toHaveLength(14);
  });

  it("finishes after a crash half-way (some movements converted, the rest not)", async () => {
    const { store, domain } = await released();
    const half = FIXTURE.ledger_entries.slice(0, 10).map((e) => e.id);
    // A copy converted alone stands for the instance that crashed after its first postings.
    const first = testDomain({ store, now: () => t.now() });
    const original = store.findAll.bind(store);
    let calls = 0;
    const partial = Object.create(store) as AppStore;
    partial.findAll = (async (...args: Parameters<AppStore["findAll"]>) => {
      const found = await original(...args);
      if (args[0] === "ledger_entries" && (args[1] as { posting_id?: unknown }).posting_id === null && calls++ === 0) {
        return found.filter((e) => half.includes(e.id));
      }
      if (calls > 1) throw new Error("crash");
      return found;
    }) as AppStore["findAll"];
    await expect(upgradeLedger(partial, first.domain.clock, first.domain.cashouts)).rejects.toThrow();
    expect((await verifyLedger(store)).differences.length).toBeGreaterThan(0);
    await upgradeLedger(store, domain.clock, domain.cashouts);
    const report = await verifyLedger(store);
    expect(report.differences).toEqual([]);
    expect(report.postings).toBe(27);
  });

  it("refuses, naming them, entries that cannot balance (a settlement half written by hand)", async () => {
    const { store, domain } = await released();
    const [half] = FIXTURE.ledger_entries.filter((e) => e.type === "settlement" && e.bucket === "available");
    await store.delete("ledger_entries", half?.id ?? "");
    await expect(upgradeLedger(store, domain.clock, domain.cashouts)).rejects.toThrow(
      /settlement entries of le_\w+ .* add up to -\d+, not 0/,
    );
  });
});
