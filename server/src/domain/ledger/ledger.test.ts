import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import { DuplicateKeyError } from "../../store/port.ts";
import type { AppStore } from "../areas.ts";
import { createClock } from "../kernel/clock.ts";
import { DomainError } from "../kernel/errors.ts";
import { iso } from "../kernel/time.ts";
import { type Account, merchantAccount, platformAccount } from "./accounts.ts";
import { balanceId, drawFromPendingCredit, ensureBalance, postRefund, settleDue } from "./ledger.ts";
import { assertBalanced, type Line, type PostingInput, postPosting, UnbalancedPostingError } from "./postings.ts";
import type { LedgerEntryDoc } from "./records.ts";

// The ledger's kernel and movements: every posting balances (refused otherwise, writing nothing); its
// merchant lines and the balance change are one write; a debit the bucket does not cover is refused and
// leaves nothing behind; pending capture credits settle once, whoever runs the job.

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

const CLEARING = platformAccount("acquirer:clearing");
const available = merchantAccount(MERCHANT, "available");
const pending = merchantAccount(MERCHANT, "pending");

/** A posting moving `amount` into `to` from the acquirer's clearing account (a debit of `to` when negative). */
const posting = (to: Account, amount: number, more: Partial<PostingInput> & { availableOn?: string } = {}) => {
  const { availableOn, ...rest } = more;
  return {
    livemode: false,
    currency: "USD",
    type: "capture",
    sourceId: "tx_source",
    lines: [
      { account: to, amount, availableOn },
      { account: CLEARING, amount: -amount },
    ],
    ...rest,
  } satisfies PostingInput;
};

const postOne = (input: PostingInput) => store.transaction((tx) => postPosting(tx, clock, input));
const balance = async () => store.get("balances", balanceId(MERCHANT, "USD"));
const entries = () => store.findAll("ledger_entries", { merchant_id: MERCHANT }, 1000);
const allEntries = () => store.findAll("ledger_entries", {}, 1000);

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a failure");
    },
    (e: unknown) => e,
  );
}

describe("assertBalanced (the kernel's refusal)", () => {
  const line = (account: Account, amount: number): Line => ({ account, amount });
  it("accepts lines that add up to zero", () => {
    expect(() =>
      assertBalanced([line(available, 700), line(CLEARING, -1000), line(platformAccount("platform:fee_revenue"), 300)]),
    ).not.toThrow();
  });

  it.each([
    ["one line", [line(available, 0)]],
    ["no lines", []],
    ["lines adding up to 1", [line(available, 1001), line(CLEARING, -1000)]],
    ["lines adding up to -1", [line(available, 999), line(CLEARING, -1000)]],
    ["a zero line", [line(available, 0), line(CLEARING, 0)]],
    ["a fraction", [line(available, 0.5), line(CLEARING, -0.5)]],
    ["NaN", [line(available, Number.NaN), line(CLEARING, Number.NaN)]],
    ["an unsafe integer", [line(available, 2 ** 53), line(CLEARING, -(2 ** 53))]],
    ["two merchants", [line(available, 5), line(merchantAccount("mch_other", "available"), -5)]],
  ])("refuses %s", (_what, lines) => {
    expect(() => assertBalanced(lines)).toThrow(UnbalancedPostingError);
  });
});

describe("postPosting", () => {
  it("credits the merchant's bucket and writes the posting, whose lines are the only record of them", async () => {
    const { posting: p, entries: lines } = await postOne(posting(available, 1000, { sourceId: "tx_1" }));
    expect(await balance()).toMatchObject({ available: 1000, pending: 0, updated_at: p.created_at });
    expect(p.id).toMatch(/^txn_[0-9A-Za-z]{24}$/);
    expect(p).toMatchObject({
      type: "capture",
      currency: "USD",
      source_id: "tx_1",
      merchant_id: MERCHANT,
      fee: 0,
      lines: [
        { account: `merchant:${MERCHANT}:available`, amount: 1000 },
        { account: "acquirer:clearing", amount: -1000 },
      ],
    });
    expect(await store.get("postings", p.id)).toEqual(p);
    // No entry copies a line that nothing changes afterwards (postings.ts isPendingCredit).
    expect(lines).toEqual([]);
    expect(await allEntries()).toEqual([]);
  });

  it("refuses an unbalanced posting before writing anything", async () => {
    const input = posting(available, 1000);
    const err = await failure(postOne({ ...input, lines: [...input.lines, { account: CLEARING, amount: 1 }] }));
    expect(err).toBeInstanceOf(UnbalancedPostingError);
    expect(err).not.toBeInstanceOf(DomainError);
    expect(await balance()).toMatchObject({ available: 0, pending: 0 });
    expect(await allEntries()).toEqual([]);
    expect(await store.findAll("postings", {})).toEqual([]);
  });

  it("keeps a pending credit as an entry too, not settled yet, with its date; a pending debit is no credit", async () => {
    const { posting: p, entries: credit } = await postOne(
      posting(pending, 900, { sourceId: "tx_1", availableOn: "2026-11-23T10:00:00.000000Z" }),
    );
    expect(credit).toEqual([
      {
        id: expect.stringMatching(/^le_[0-9A-Za-z]{24}$/),
        livemode: false,
        created_at: p.created_at,
        posting_id: p.id,
        account: `merchant:${MERCHANT}:pending`,
        merchant_id: MERCHANT,
        currency: "USD",
        bucket: "pending",
        amount: 900,
        type: "capture",
        source_id: "tx_1",
        available_on: "2026-11-23T10:00:00.000000Z",
        settled: false,
        drawn: 0,
      },
    ]);
    expect(await allEntries()).toEqual(credit);
    const { entries: debit } = await postOne(posting(pending, -900, { type: "settlement" }));
    expect(debit).toEqual([]);
    expect(await balance()).toMatchObject({ available: 0, pending: 0 });
    // An available credit has nothing to settle or draw on either.
    expect((await postOne(posting(available, 5))).entries).toEqual([]);
  });

  it("moves money between two buckets of one merchant in one conditional update", async () => {
    await postOne(posting(pending, 900));
    await postOne({
      ...posting(pending, -900, { type: "settlement" }),
      lines: [
        { account: pending, amount: -900 },
        { account: available, amount: 900 },
      ],
    });
    expect(await balance()).toMatchObject({ available: 900, pending: 0 });
  });

  it("debits a bucket down to exactly zero", async () => {
    await postOne(posting(available, 1000));
    await postOne(posting(available, -1000, { type: "refund" }));
    expect(await balance()).toMatchObject({ available: 0 });
  });

  it("refuses a debit the bucket does not cover: insufficient_balance, nothing written", async () => {
    await postOne(posting(available, 1000));
    const before = await allEntries();
    const err = await failure(postOne(posting(available, -1001, { type: "refund" })));
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe("insufficient_balance");
    expect((err as DomainError).param).toBe("amount");
    expect((err as DomainError).message).toBe("The merchant's available USD balance does not cover 1001.");
    expect(await balance()).toMatchObject({ available: 1000, pending: 0 });
    expect(await allEntries()).toEqual(before);
    expect(await store.findAll("postings", {})).toHaveLength(1);
  });

  it("checks the bucket the debit names, not the other one", async () => {
    await postOne(posting(available, 5000));
    const err = await failure(postOne(posting(pending, -1, { type: "settlement" })));
    expect((err as DomainError).code).toBe("insufficient_balance");
    expect((err as DomainError).message).toContain("pending");
    expect(await balance()).toMatchObject({ available: 5000, pending: 0 });
  });

  it("lets a line marked overdraft take the bucket below zero (the dispute rule), and only that line", async () => {
    await postOne(posting(available, 100));
    const input = posting(available, -300, { type: "dispute" });
    await postOne({ ...input, lines: [{ ...input.lines[0], overdraft: true } as Line, input.lines[1] as Line] });
    expect(await balance()).toMatchObject({ available: -200 });
    const err = await failure(postOne(posting(available, -1, { type: "refund" })));
    expect((err as DomainError).code).toBe("insufficient_balance");
  });

  it("rolls the whole transaction back when a debit is refused", async () => {
    await postOne(posting(available, 100));
    const err = await failure(
      store.transaction(async (tx) => {
        await postPosting(tx, clock, posting(available, 50, { sourceId: "tx_kept?" }));
        await postPosting(tx, clock, posting(available, -500, { type: "refund" }));
      }),
    );
    expect((err as DomainError).code).toBe("insufficient_balance");
    expect(await balance()).toMatchObject({ available: 100 });
    expect(await store.findAll("postings", {})).toHaveLength(1);
  });

  it("is a programming error (not a 4xx) when the balance was never created", async () => {
    const err = await failure(postOne(posting(available, 100, { currency: "JPY" })));
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(DomainError);
    expect(await allEntries()).toEqual([]);
  });

  it("writes a posting between the platform's own accounts without any balance", async () => {
    const { posting: p } = await postOne({
      ...posting(platformAccount("cashouts:in_transit"), -700, { type: "cashout_paid" }),
      lines: [
        { account: platformAccount("cashouts:in_transit"), amount: -700 },
        { account: platformAccount("cashouts:paid_out"), amount: 700 },
      ],
    });
    expect(p.merchant_id).toBeNull();
    expect(await balance()).toMatchObject({ available: 0, pending: 0 });
  });
});

describe("ensureBalance", () => {
  it("creates an empty balance once, in the caller's environment", async () => {
    await ensureBalance(store, true, MERCHANT, "EUR", clock);
    await ensureBalance(store, true, MERCHANT, "EUR", clock);
    const rows = await store.findAll("balances", { merchant_id: MERCHANT, currency: "EUR" });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id: `${MERCHANT}:EUR`, livemode: true, available: 0, pending: 0 });
  });

  it("keeps what the balance holds when called again", async () => {
    await postOne(posting(available, 700));
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

describe("settleDue", () => {
  const day = 86_400_000;
  async function pendingCredit(amount: number, availableInMs: number): Promise<LedgerEntryDoc> {
    const { entries: lines } = await postOne(
      posting(pending, amount, { sourceId: `tx_${amount}`, availableOn: iso(new Date(clockMs + availableInMs)) }),
    );
    return lines[0] as LedgerEntryDoc;
  }

  it("moves a credit once its date has come (not before), with a settlement posting", async () => {
    const credit = await pendingCredit(900, day);
    clockMs += day - 1;
    expect(await settleDue(store, clock, false)).toBe(0);
    expect(await balance()).toMatchObject({ available: 0, pending: 900 });
    clockMs += 1;
    expect(await settleDue(store, clock, false)).toBe(1);
    expect(await balance()).toMatchObject({ available: 900, pending: 0 });
    // One posting, between the merchant's two accounts, its source the credit (no entry: nothing to settle).
    expect((await entries()).filter((e) => e.type === "settlement")).toEqual([]);
    const [p] = await store.findAll("postings", { type: "settlement" });
    expect(p?.source_id).toBe(credit.id);
    expect(p?.lines).toEqual([
      { account: `merchant:${MERCHANT}:pending`, amount: -900 },
      { account: `merchant:${MERCHANT}:available`, amount: 900 },
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
    expect(await store.findAll("postings", { type: "settlement" })).toHaveLength(1);
  });
});

describe("postRefund (a refund before its capture settled)", () => {
  const CHARGE = "tx_drawtest0000000000000000";
  /** A pending capture credit of 1000 for CHARGE, of which `drawn` was already refunded. */
  async function credit(drawn = 0): Promise<LedgerEntryDoc> {
    const { entries: lines } = await postOne(
      posting(pending, 1000, { sourceId: CHARGE, availableOn: "2026-11-23T10:00:00.000000Z" }),
    );
    const entry = lines[0] as LedgerEntryDoc;
    if (drawn === 0) return entry;
    await postOne(posting(pending, -drawn, { type: "refund", sourceId: "re_earlier" }));
    return (await store.update("ledger_entries", entry.id, { set: { drawn } })) as LedgerEntryDoc;
  }
  const refund = (amount: number) => ({
    livemode: false,
    merchantId: MERCHANT,
    currency: "USD",
    chargeId: CHARGE,
    refundId: "re_now",
    amount,
  });
  const draw = (amount: number) => store.transaction((t) => postRefund(t, clock, refund(amount)));
  const refundLines = async () => (await store.findAll("postings", { source_id: "re_now" })).map((p) => p.lines);

  it("takes the refund from what is left of the credit, marking it drawn; the acquirer is owed it back", async () => {
    const c = await credit(300);
    await draw(500);
    expect((await store.get("ledger_entries", c.id))?.drawn).toBe(800);
    expect(await refundLines()).toEqual([
      [
        { account: `merchant:${MERCHANT}:pending`, amount: -500 },
        { account: "acquirer:clearing", amount: 500 },
      ],
    ]);
    expect(await balance()).toMatchObject({ pending: 200, available: 0 });
  });

  it("takes at most what is left of the credit, and the rest from available, in one posting per bucket", async () => {
    await postOne(posting(available, 100));
    const c = await credit(300);
    await draw(800);
    expect((await store.get("ledger_entries", c.id))?.drawn).toBe(1000);
    // Two postings, so that each balance transaction moves one bucket (reconciliation stays exact).
    const lines = await refundLines();
    expect(lines).toHaveLength(2);
    expect(lines).toEqual(
      expect.arrayContaining([
        [
          { account: `merchant:${MERCHANT}:pending`, amount: -700 },
          { account: "acquirer:clearing", amount: 700 },
        ],
        [
          { account: `merchant:${MERCHANT}:available`, amount: -100 },
          { account: "acquirer:clearing", amount: 100 },
        ],
      ]),
    );
    const shown = await store.findAll("balance_transactions", { source_id: "re_now" });
    expect(shown.map((t) => [t.type, t.net, t.status, t.reconcile_at !== null]).sort()).toEqual([
      ["refund", -100, "available", true],
      ["refund", -700, "pending", false],
    ]);
    expect(await balance()).toMatchObject({ pending: 0, available: 0 });
  });

  it("is refused, the credit untouched, when the credit and available together do not cover it", async () => {
    const c = await credit(300);
    const err = await failure(draw(800));
    expect((err as DomainError).code).toBe("insufficient_balance");
    expect((await store.get("ledger_entries", c.id))?.drawn).toBe(300);
    expect(await refundLines()).toEqual([]);
  });

  it("takes nothing from a credit drawn in full, a settled one, or none", async () => {
    await postOne(posting(available, 1000));
    await credit(1000);
    expect(await store.transaction((t) => drawFromPendingCredit(t, refund(100)))).toBe(0);
    const other = await credit();
    await store.update("ledger_entries", other.id, { set: { settled: true } });
    await store.update("ledger_entries", (await credit(1000)).id, { set: { settled: true } });
    expect(await store.transaction((t) => drawFromPendingCredit(t, refund(100)))).toBe(0);
    await draw(100);
    expect((await refundLines())[0]?.[0]).toEqual({ account: `merchant:${MERCHANT}:available`, amount: -100 });
  });

  it("takes nothing when the credit changed after it was read (a settlement or refund got there first)", async () => {
    const c = await credit(300);
    // The credit as a concurrent reader saw it before another refund drew 200 more.
    const stale = { ...c };
    await store.update("ledger_entries", c.id, { set: { drawn: 500 } });
    const taken = await store.transaction((tx) =>
      drawFromPendingCredit({ ...tx, findOne: (async () => stale) as typeof tx.findOne }, refund(500)),
    );
    expect(taken).toBe(0);
    expect((await store.get("ledger_entries", c.id))?.drawn).toBe(500);
  });
});
