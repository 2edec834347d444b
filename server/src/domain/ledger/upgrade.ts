import { DuplicateKeyError, type Page, type PageResult } from "../../store/port.ts";
import type { CashoutDoc } from "../cashouts/records.ts";
import type { Clock } from "../kernel/clock.ts";
import { accountName, merchantAccount, type PlatformAccount, platformAccount } from "./accounts.ts";
import { balanceTransactionOf } from "./balance-transactions.ts";
import { postCashoutPaid } from "./ledger.ts";
import type { Line } from "./postings.ts";
import { reconcileCashout } from "./reconciliation.ts";
import type { LedgerEntryDoc, LedgerStore, LedgerTx, PostingDoc, PostingLine, PostingType } from "./records.ts";

// Brings a database written before double entry up to date, at open (server.ts startServer and the admin
// CLI run it before anything else). Releases up to 2026-11 kept a single-entry ledger: one entry per
// change of a merchant's bucket, with no posting and no other side. Each group of such entries (those of
// one movement: the same type and source) becomes one posting: its entries keep their ids and amounts
// and gain their posting and account, and the other side is added as a line of the posting (the acquirer's clearing account for
// captures and refunds, cashouts in transit for cashouts and their reversals; a settlement's two entries
// already balance; a refund that drew on both a pending credit and `available` becomes two postings, one
// per bucket, as refunds are posted now). Paid cashouts, which moved no money in the single-entry ledger,
// get their posting from in transit to paid out. Merchant balances do not change: they already equal their
// entries.
//
// Each posting that touches a merchant also gets its balance transaction (listBalanceTransactions), in the
// same transaction, as postPosting writes it for a new movement: a captured charge whose credit has
// settled is `available`, a settlement shows its charge. So the merchant's history is listed, and a
// cashout is reconciled against it (docs/money.md "Reconciling a cashout"): movements are converted oldest
// first, and each past cashout takes, when it is converted, the front of the queue its earlier movements
// made, exactly as it would have had balance transactions existed when it was made. Past cashouts'
// contents are final then (no `cashout.reconciled` event is sent for them: their time has passed), and
// what waits in the queue afterwards adds up to each balance's `available`, so later cashouts need no
// adjustment for unknown history.
//
// Safe to run again, after a crash half-way, and on two instances at once: each posting is written in
// one transaction, conditional on its entries not having a posting yet, under an id made from theirs.
// Every instance converts in the same order (created_at, then id) and goes on only once the movement
// before has been converted and committed (by it or by the other), so a cashout never runs ahead of the
// movements before it.

/** The other side of each single-entry movement. */
const COUNTERPART: Partial<Record<PostingType, PlatformAccount>> = {
  capture: "acquirer:clearing",
  refund: "acquirer:clearing",
  cashout: "cashouts:in_transit",
  cashout_reversal: "cashouts:in_transit",
};

/** Another instance converted the same entries first: this one leaves them. */
class TakenMeanwhile extends Error {}

const BATCH = 200;

/** What the upgrade needs of the cashouts area (this area declares the port; cashouts' service implements it). */
export interface PaidCashouts {
  /** A page of paid cashouts of both environments, newest first. */
  listPaid(page: Page): Promise<PageResult<PaidCashout>>;
}

/** What a paid cashout's posting is made from. */
export type PaidCashout = Pick<CashoutDoc, "id" | "livemode" | "merchant_id" | "currency" | "amount" | "updated_at">;

/** Returns how many postings it wrote (0 on an up-to-date database: one indexed query). */
export async function upgradeLedger(store: LedgerStore, clock: Clock, cashouts: PaidCashouts): Promise<number> {
  if (!(await store.findOne("ledger_entries", { posting_id: null }))) return 0;
  // Paid cashouts first, while the old entries are still there to say this database needs it: a crash
  // after the entries were converted would otherwise leave them without their posting.
  let written = await postPaidCashouts(store, clock, cashouts);
  for (;;) {
    // Oldest first: a cashout is allocated against what came before it (the index is created_at, id of those only).
    const batch = await store.findAll("ledger_entries", { posting_id: null }, BATCH, {
      by: "created_at",
      direction: "asc",
    });
    if (batch.length === 0) return written;
    const groups = new Map<string, LedgerEntryDoc>();
    for (const entry of batch) {
      const key = movementKey(entry);
      if (!groups.has(key)) groups.set(key, entry);
    }
    for (const first of groups.values()) {
      try {
        if (await store.transaction((tx) => convert(tx, clock, first))) written++;
      } catch (err) {
        if (!(err instanceof TakenMeanwhile || err instanceof DuplicateKeyError)) throw err;
      }
    }
  }
}

/**
 * The entries of one movement: its type and source; a refund's also by bucket (the release wrote one
 * entry per bucket a refund drew on, and a balance transaction moves one bucket: balance-transactions.ts).
 */
const movementKey = (e: LedgerEntryDoc) => `${e.type} ${e.source_id}${e.type === "refund" ? ` ${e.bucket}` : ""}`;

/** One movement's entries → one posting and its balance transaction; false when another instance did it already. */
async function convert(tx: LedgerTx, clock: Clock, first: LedgerEntryDoc): Promise<boolean> {
  const entries = await tx.findAll(
    "ledger_entries",
    {
      type: first.type,
      source_id: first.source_id,
      posting_id: null,
      ...(first.type === "refund" ? { bucket: first.bucket } : {}),
    },
    1000,
    { by: "id", direction: "asc" },
  );
  const [earliest] = entries;
  if (!earliest) return false;
  const sum = entries.reduce((s, e) => s + e.amount, 0);
  const counterpart = COUNTERPART[first.type];
  if (sum !== 0 && counterpart === undefined) {
    throw new Error(
      `ledger upgrade: the ${first.type} entries of ${first.source_id} (${entries.map((e) => e.id).join(", ")}) add up to ${sum}, not 0; fix them before upgrading`,
    );
  }
  const id = `txn_${earliest.id.slice(earliest.id.indexOf("_") + 1)}`;
  const lines: PostingLine[] = [];
  /** The same lines as the kernel's (postings.ts Line), for the balance transaction. */
  const moved: Line[] = [];
  for (const entry of entries) {
    // Every entry of the single-entry ledger changed a merchant's bucket; one without a bucket is not one of them.
    if (entry.bucket === null) {
      throw new Error(
        `ledger upgrade: entry ${entry.id} (${entry.type} of ${entry.source_id}) has no bucket, which every single-entry ledger entry has; fix it before upgrading`,
      );
    }
    const merchant = merchantAccount(entry.merchant_id ?? "", entry.bucket);
    const account = accountName(merchant);
    const claimed = await tx.update(
      "ledger_entries",
      entry.id,
      { set: { posting_id: id, account } },
      { posting_id: null },
    );
    if (!claimed) throw new TakenMeanwhile();
    lines.push({ account, amount: entry.amount });
    moved.push({ account: merchant, amount: entry.amount, availableOn: entry.available_on });
  }
  if (sum !== 0 && counterpart !== undefined) {
    lines.push({ account: counterpart, amount: -sum });
    // The other side is a line of the posting only, as postPosting writes a platform account's line
    // (postings.ts isPendingCredit: only pending credits are entries too).
    moved.push({ account: platformAccount(counterpart), amount: -sum });
  }
  const posting: PostingDoc = {
    id,
    livemode: earliest.livemode,
    created_at: entries.map((e) => e.created_at).sort()[0] ?? earliest.created_at,
    type: first.type,
    currency: earliest.currency,
    source_id: first.source_id,
    merchant_id: earliest.merchant_id,
    lines,
    fee: 0,
  };
  await tx.insert("postings", posting);
  if (earliest.merchant_id) await backfillBalanceTransaction(tx, clock, posting, earliest, moved);
  return true;
}

/**
 * The balance transaction postPosting would have written for `posting` (balance-transactions.ts
 * balanceTransactionOf), as its movement stands now; for a past cashout, its allocation too.
 */
async function backfillBalanceTransaction(
  tx: LedgerTx,
  clock: Clock,
  posting: PostingDoc,
  earliest: LedgerEntryDoc,
  moved: Line[],
): Promise<void> {
  const merchantId = earliest.merchant_id ?? "";
  let shown: string | undefined;
  let availableAt: string | undefined;
  if (posting.type === "settlement") {
    // A settlement's source is the credit it settled; its transaction shows the charge, available on the
    // credit's date (ledger.ts settleDue).
    const credit = await tx.get("ledger_entries", posting.source_id);
    shown = credit?.source_id;
    availableAt = credit?.available_on ?? undefined;
  }
  const transaction = balanceTransactionOf(posting, merchantId, moved, shown, availableAt);
  // A charge whose pending credit has settled is available (settleDue sets it when it settles one).
  if (posting.type === "capture" && earliest.settled === true) transaction.status = "available";
  await tx.insert("balance_transactions", transaction);
  if (posting.type === "cashout") {
    await reconcileCashout(tx, clock, {
      id: posting.source_id,
      livemode: posting.livemode,
      merchantId,
      currency: posting.currency,
      amount: -transaction.net,
      at: posting.created_at,
    });
  }
}

/** A `cashout_paid` posting for every paid cashout that has none; returns how many it wrote. */
async function postPaidCashouts(store: LedgerStore, clock: Clock, cashouts: PaidCashouts): Promise<number> {
  let written = 0;
  let after: string | undefined;
  for (;;) {
    const page = await cashouts.listPaid({ limit: 100, startingAfter: after });
    for (const cashout of page.data) {
      try {
        await store.transaction(async (tx) => {
          if (await tx.findOne("postings", { source_id: cashout.id, type: "cashout_paid" })) throw new TakenMeanwhile();
          await postCashoutPaid(tx, clock, {
            livemode: cashout.livemode,
            merchantId: cashout.merchant_id,
            currency: cashout.currency,
            cashoutId: cashout.id,
            amount: cashout.amount,
            id: `txn_${cashout.id.slice(cashout.id.indexOf("_") + 1)}`,
            at: cashout.updated_at,
          });
        });
        written++;
      } catch (err) {
        if (!(err instanceof TakenMeanwhile || err instanceof DuplicateKeyError)) throw err;
      }
    }
    if (!page.hasMore) return written;
    after = page.data.at(-1)?.id;
  }
}
