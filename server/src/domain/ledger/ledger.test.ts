import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import { DuplicateKeyError } from "../../store/port.ts";
import type { AppStore } from "../collections.ts";
import { createClock } from "../kernel/clock.ts";
import { DomainError } from "../kernel/errors.ts";
import { iso } from "../kernel/time.ts";
import { balanceId, drawFromPendingCredit, ensureBalance, type Movement, post, settleDue } from "./ledger.ts";
import type { LedgerEntryDoc } from "./records.ts";

// The ledger primitives: every movement is an entry plus a balance change in one transaction; a debit the
// bucket does not cover is refused and leaves nothing behind; pending capture credits settle once, whoever
// runs the job.

const MERCHANT = "mch_ledgertest000000000000";
let ctx: ReturnType<typeof testDomain>;
let store: AppStore;
const now = () => new Date(clockMs);
const clock = createClock(now);
let clockMs = Date.parse("2026-11-21T10:00:00Z");

beforeEach(async () => {
  ctx = testDomain();
  store = ctx.store;
  clockMs = Date.parse("2026-11-21T10:00:00Z");
  await ensureBalance(store, false, MERCHANT, "USD", clock);
});
afterEach(async () => {
  vi.restoreAllMocks();
  await store.close();
});

const movement = (m: Partial<Movement>): Movement => ({
  livemode: false,
  merchantId: MERCHANT,
  currency: "USD",
  bucket: "available",
  amount: 1000,
  type: "capture",
  sourceId: "tx_source",
  ...m,
});

const postOne = (m: Partial<Movement>) => store.transaction((tx) => post(tx, clock, movement(m)));
const balance = async () => store.get("balances", balanceId(MERCHANT, "USD"));
const entries = () => store.findAll("ledger_entries", { merchant_id: MERCHANT }, 1000);

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a failure");
    },
    (e: unknown) => e,
  );
}

describe("ensureBalance", () => {
  it("creates an empty balance once, in the caller's environment", async () => {
    await ensureBalance(store, true, MERCHANT, "EUR", clock);
    await ensureBalance(store, true, MERCHANT, "EUR", clock);
    const rows = await store.findAll("balances", { merchant_id: MERCHANT, currency: "EUR" });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: `${MERCHANT}:EUR`, livemode: true, available: 0, pending: 0 });
  });

  it("keeps what the balance holds when called again", async () => {
    await postOne({ amount: 700 });
    await ensureBalance(store, false, MERCHANT, "USD", clock);
    expect(await balance()).toMatchObject({ available: 700, pending: 0 });
  });

  it("the loser of a creation race finds the winner's balance and succeeds", async () => {
    // Both looked before either inserted: this one's insert meets the winner's document.
    vi.spyOn(store, "get").mockResolvedValueOnce(null);
    const insert = vi.spyOn(store, "insert");
    await expect(ensureBalance(store, false, MERCHANT, "USD", clock)).resolves.toBeUndefined();
    expect(insert).toHaveBeenCalledTimes(1);
    await expect(insert.mock.results[0]?.value).rejects.toBeInstanceOf(DuplicateKeyError);
  });

  it("does not swallow any other failure of the store", async () => {
    vi.spyOn(store, "insert").mockRejectedValueOnce(new Error("disk I/O error"));
    const err = await failure(ensureBalance(store, false, MERCHANT, "GBP", clock));
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(DuplicateKeyError);
  });
});

describe("post", () => {
  it("credits a bucket and writes one entry describing the movement", async () => {
    const entry = await postOne({ amount: 1000, sourceId: "tx_1" });
    // The balance change and its entry carry the same instant.
    expect(await balance()).toMatchObject({ available: 1000, pending: 0, updated_at: entry.created_at });
    expect(entry.id).toMatch(/^le_[0-9A-Za-z]{24}$/);
    expect(await entries()).toEqual([entry]);
    expect(entry).toMatchObject({
      livemode: false,
      merchant_id: MERCHANT,
      currency: "USD",
      bucket: "available",
      amount: 1000,
      type: "capture",
      source_id: "tx_1",
      available_on: null,
      settled: null,
    });
  });

  it("marks a pending credit as not settled yet, with its date; a pending debit is not a credit to settle", async () => {
    const credit = await postOne({ bucket: "pending", amount: 900, availableOn: "2026-11-23T10:00:00.000000Z" });
    expect(credit).toMatchObject({
      bucket: "pending",
      settled: false,
      drawn: 0,
      available_on: "2026-11-23T10:00:00.000000Z",
    });
    const debit = await postOne({ bucket: "pending", amount: -900, type: "settlement" });
    expect(debit).toMatchObject({ settled: null, drawn: null });
    expect(await balance()).toMatchObject({ available: 0, pending: 0 });
    // An available credit has nothing to settle or draw on either.
    expect(await postOne({ amount: 5 })).toMatchObject({ settled: null, drawn: null });
  });

  it("debits a bucket down to exactly zero", async () => {
    await postOne({ amount: 1000 });
    const debit = await postOne({ amount: -1000, type: "refund" });
    expect(debit.amount).toBe(-1000);
    expect(await balance()).toMatchObject({ available: 0 });
  });

  it("refuses a debit the bucket does not cover: insufficient_balance, nothing written", async () => {
    await postOne({ amount: 1000 });
    const before = await entries();
    const err = await failure(postOne({ amount: -1001, type: "refund" }));
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe("insufficient_balance");
    expect((err as DomainError).param).toBe("amount");
    expect(await balance()).toMatchObject({ available: 1000, pending: 0 });
    expect(await entries()).toEqual(before);
  });

  it("checks the bucket the debit names, not the other one", async () => {
    await postOne({ bucket: "available", amount: 5000 });
    const err = await failure(postOne({ bucket: "pending", amount: -1, type: "settlement" }));
    expect((err as DomainError).code).toBe("insufficient_balance");
    expect(await balance()).toMatchObject({ available: 5000, pending: 0 });
  });

  it("rolls the whole transaction back when a debit is refused", async () => {
    await postOne({ amount: 100 });
    const err = await failure(
      store.transaction(async (tx) => {
        await post(tx, clock, movement({ amount: 50, sourceId: "tx_kept?" }));
        await post(tx, clock, movement({ amount: -500, type: "refund" }));
      }),
    );
    expect((err as DomainError).code).toBe("insufficient_balance");
    expect(await balance()).toMatchObject({ available: 100 });
    expect(await entries()).toHaveLength(1);
  });

  it("is a programming error (not a 4xx) when the balance was never created", async () => {
    const err = await failure(postOne({ currency: "JPY" }));
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(DomainError);
    expect(await store.findAll("ledger_entries", {})).toEqual([]);
  });

  it.each([0, 1.5, -0.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1])(
    "refuses a movement of %d minor units",
    async (amount) => {
      const err = await failure(postOne({ amount }));
      expect(err).toBeInstanceOf(Error);
      expect(err).not.toBeInstanceOf(DomainError);
      expect(await balance()).toMatchObject({ available: 0, pending: 0 });
      expect(await entries()).toEqual([]);
    },
  );
});

describe("settleDue", () => {
  const day = 86_400_000;
  async function pendingCredit(amount: number, availableInMs: number): Promise<LedgerEntryDoc> {
    return postOne({
      bucket: "pending",
      amount,
      sourceId: `tx_${amount}`,
      availableOn: iso(new Date(clockMs + availableInMs)),
    });
  }

  it("moves a credit once its date has come (not before), with two settlement entries", async () => {
    const credit = await pendingCredit(900, day);
    clockMs += day - 1;
    expect(await settleDue(store, clock, false)).toBe(0);
    expect(await balance()).toMatchObject({ available: 0, pending: 900 });
    clockMs += 1;
    expect(await settleDue(store, clock, false)).toBe(1);
    expect(await balance()).toMatchObject({ available: 900, pending: 0 });
    const settlement = (await entries()).filter((e) => e.type === "settlement");
    expect(settlement.map((e) => [e.bucket, e.amount, e.source_id]).sort()).toEqual([
      ["available", 900, credit.id],
      ["pending", -900, credit.id],
    ]);
    expect((await store.get("ledger_entries", credit.id))?.settled).toBe(true);
    expect(await settleDue(store, clock, false)).toBe(0);
  });

  it("settles only what is due, and counts what it settled", async () => {
    await pendingCredit(100, 0);
    await pendingCredit(200, 0);
    await pendingCredit(400, day);
    expect(await settleDue(store, clock, false)).toBe(2);
    expect(await balance()).toMatchObject({ available: 300, pending: 400 });
  });

  it("settles at most `limit` credits per pass", async () => {
    for (const amount of [1, 2, 3]) await pendingCredit(amount, 0);
    expect(await settleDue(store, clock, false, 2)).toBe(2);
    expect(await settleDue(store, clock, false, 2)).toBe(1);
    expect(await balance()).toMatchObject({ available: 6, pending: 0 });
  });

  it("settles a credit once when two instances run the job at the same time", async () => {
    await pendingCredit(900, 0);
    // The other instance settles between this one's query and its claim.
    const findAll = store.findAll.bind(store);
    let other: Promise<number> | undefined;
    vi.spyOn(store, "findAll").mockImplementationOnce(async (...args: Parameters<AppStore["findAll"]>) => {
      const due = await findAll(...args);
      other = settleDue(store, clock, false);
      await other;
      return due as never;
    });
    expect(await settleDue(store, clock, false)).toBe(0);
    expect(await other).toBe(1);
    expect(await balance()).toMatchObject({ available: 900, pending: 0 });
    expect((await entries()).filter((e) => e.type === "settlement")).toHaveLength(2);
  });
});

describe("drawFromPendingCredit (a refund before its capture settled)", () => {
  const CHARGE = "tx_drawtest0000000000000000";
  /** A pending capture credit of 1000 for CHARGE, of which `drawn` was already refunded. */
  async function credit(drawn = 0): Promise<LedgerEntryDoc> {
    const entry = await postOne({
      bucket: "pending",
      amount: 1000,
      type: "capture",
      sourceId: CHARGE,
      availableOn: "2026-11-23T10:00:00.000000Z",
    });
    if (drawn === 0) return entry;
    await postOne({ bucket: "pending", amount: -drawn, type: "refund", sourceId: "re_earlier" });
    return (await store.update("ledger_entries", entry.id, { set: { drawn } })) as LedgerEntryDoc;
  }
  const draw = (amount: number, tx?: Parameters<typeof drawFromPendingCredit>[0]) => {
    const refund = {
      livemode: false,
      merchantId: MERCHANT,
      currency: "USD",
      chargeId: CHARGE,
      refundId: "re_now",
      amount,
    };
    return tx
      ? drawFromPendingCredit(tx, clock, refund)
      : store.transaction((t) => drawFromPendingCredit(t, clock, refund));
  };
  const refundEntries = async () =>
    (await entries())
      .filter((e) => e.source_id === "re_now")
      .map((e) => ({ bucket: e.bucket, amount: e.amount, type: e.type }));

  it("takes the refund from what is left of the credit, marking it drawn", async () => {
    const c = await credit(300);
    expect(await draw(500)).toBe(500);
    expect((await store.get("ledger_entries", c.id))?.drawn).toBe(800);
    expect(await refundEntries()).toEqual([{ bucket: "pending", amount: -500, type: "refund" }]);
    expect(await balance()).toMatchObject({ pending: 200, available: 0 });
  });

  it("takes at most what is left; the caller debits the rest from available", async () => {
    const c = await credit(300);
    expect(await draw(800)).toBe(700);
    expect((await store.get("ledger_entries", c.id))?.drawn).toBe(1000);
    expect(await balance()).toMatchObject({ pending: 0 });
  });

  it("takes nothing from a credit drawn in full, a settled one, or none", async () => {
    await credit(1000);
    expect(await draw(100)).toBe(0);
    expect(await refundEntries()).toEqual([]);
    const other = await credit();
    await store.update("ledger_entries", other.id, { set: { settled: true } });
    await store.update("ledger_entries", (await credit(1000)).id, { set: { settled: true } });
    expect(await draw(100)).toBe(0);
    expect(await refundEntries()).toEqual([]);
  });

  it("takes nothing when the credit changed after it was read (a settlement or refund got there first)", async () => {
    const c = await credit(300);
    // The credit as a concurrent reader saw it before another refund drew 200 more.
    const stale = { ...c };
    await store.update("ledger_entries", c.id, { set: { drawn: 500 } });
    const taken = await store.transaction((tx) =>
      draw(500, { ...tx, findOne: (async () => stale) as typeof tx.findOne }),
    );
    expect(taken).toBe(0);
    expect((await store.get("ledger_entries", c.id))?.drawn).toBe(500);
    expect(await refundEntries()).toEqual([]);
  });
});
