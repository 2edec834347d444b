import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import type { AppStore, Docs } from "../collections.ts";
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
    expect((await verifyLedger(store)).differences).toEqual([]);
  });

  it("writes each posting once when two instances upgrade at the same time", async () => {
    const { store, domain } = await released();
    const written = await Promise.all([
      upgradeLedger(store, domain.clock, domain.cashouts),
      upgradeLedger(store, domain.clock, domain.cashouts),
    ]);
    expect(written[0] + written[1]).toBe(27);
    const report = await verifyLedger(store);
    expect(report.differences).toEqual([]);
    expect(report.postings).toBe(27);
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
