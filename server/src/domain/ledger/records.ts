import type { components } from "@payments/contract/types";
import type { BaseDoc } from "../../store/port.ts";
import { collection } from "../kernel/records.ts";
import type { AreaDocs, AreaStore, AreaTx } from "../kernel/store.ts";
import type { FeeSchedule } from "./fees.ts";

// The ledger's records (DESIGN §8, issue 30): double entry. Every money movement is one posting: two or
// more lines across named accounts (accounts.ts) that add up to zero, written together with the merchant
// balances it changes, in the transaction of the change that caused it (postings.ts).

/**
 * What a posting records. The first five are every movement the platform makes today; `cashout_paid`
 * closes a cashout's money in transit; `capture_reversal` undoes a capture the acquirer reports failed, `refund_reversal` a refund; `dispute`, `fee` (a dispute's fee) and `dispute_reversal` are a
 * chargeback's (disputes/, issue 31); `adjustment` is named for corrections an operator may have to make,
 * and no code posts it yet.
 */
export type PostingType =
  | "capture"
  | "capture_reversal"
  | "refund"
  | "refund_reversal"
  | "settlement"
  | "cashout"
  | "cashout_reversal"
  | "cashout_paid"
  | "dispute"
  | "dispute_reversal"
  | "fee"
  | "adjustment";

/** One line of a posting, as stored in it. */
export interface PostingLine {
  /** The account's name (accounts.ts accountName): `merchant:mch_…:available`, `acquirer:clearing`, … */
  account: string;
  /** Signed minor units of the posting's currency; the lines of a posting add up to zero. */
  amount: number;
}

/** One immutable, balanced money movement. Id `txn_…`. */
export interface PostingDoc extends BaseDoc {
  type: PostingType;
  currency: string;
  /** The charge, refund, settled credit (ledger entry) or cashout that caused it. */
  source_id: string;
  /** The merchant whose balance it changes, or null when it touches only the platform's accounts. */
  merchant_id: string | null;
  lines: PostingLine[];
  /** The platform's fee taken by this posting (a capture's), 0 when none. */
  fee: number;
}

/**
 * A line of a posting that changes after the posting, kept as its own record: a capture credit waiting in
 * a merchant's `pending` bucket (postings.ts isPendingCredit), which the settlement job moves and refunds
 * draw on. Every other line is in its posting only (issue 36: one record for each fact); databases written
 * before hold an entry for every line, still read (verify.ts takes them as copies). `amount` is signed:
 * credits positive, debits negative.
 */
export interface LedgerEntryDoc extends BaseDoc {
  /**
   * The posting this line belongs to. Missing on entries a release before double entry wrote, until the
   * upgrade at open gives them one (upgrade.ts).
   */
  posting_id: string | null;
  /** The account's name (accounts.ts); missing like posting_id on entries not yet upgraded. */
  account: string;
  /** The merchant whose account this is; null for the platform's own accounts. */
  merchant_id: string | null;
  currency: string;
  /** For a merchant's balance accounts, which of the balance's amounts it changes; otherwise null. */
  bucket: "available" | "pending" | null;
  amount: number;
  /** The posting's type. */
  type: PostingType;
  /** The posting's source. */
  source_id: string;
  /** For pending capture credits: when they become available, and whether that has happened. */
  available_on: string | null;
  settled: boolean | null;
  /**
   * For pending capture credits: how much refunds took from this credit before it settled (0 to
   * `amount`); settlement moves only the rest to `available`. With `settled`, the only fields of an
   * entry that ever change.
   */
  drawn: number | null;
}

/** A merchant's balance in one currency; id `<merchant id>:<currency>`. Never negative. */
export interface BalanceDoc extends BaseDoc {
  merchant_id: string;
  currency: string;
  available: number;
  pending: number;
  updated_at: string;
}

/** The contract's BalanceTransactionType: what moved the merchant's money. */
export type BalanceTransactionType = components["schemas"]["BalanceTransactionType"];

/**
 * A merchant's view of one posting that touches its balance (getBalanceTransaction,
 * listBalanceTransactions), written with the posting in its transaction and sharing its `txn_` id; or one
 * half of a reconciliation adjustment (balance-transactions.ts), which moves no money and has no posting.
 */
export interface BalanceTransactionDoc extends BaseDoc {
  merchant_id: string;
  type: BalanceTransactionType;
  currency: string;
  amount: number;
  fee: number;
  net: number;
  /** pending (in the merchant's `pending` balance) or available; a capture's changes once, when it settles. */
  status: "pending" | "available";
  available_on: string;
  /** A charge, refund or cashout id; for a settlement its charge; for an adjustment the transaction it splits. */
  source_id: string;
  /** The cashout that paid this transaction out (reconciliation), or null. Set once. */
  cashout_id: string | null;
  /**
   * While this transaction's `net` waits for a cashout to take it: the time its money became available
   * (the reconciliation's first-in-first-out order, with the id); null once a cashout took it, and for
   * transactions that never go to a cashout (a cashout's own, pending money). Its index is sparse.
   */
  reconcile_at: string | null;
}

/**
 * A merchant's fee override (setMerchantFeeSchedule); id: the merchant's id. `schedule` null: removed,
 * the platform's schedule applies again.
 */
export interface FeeOverrideDoc extends BaseDoc {
  schedule: FeeSchedule | null;
  updated_at: string;
}

export const ledgerCollections = {
  // By source only (the upgrade's check for a paid cashout's posting): every index is written by every
  // capture, so the balance transactions list adds its own when it lands.
  // Postings and entries are never listed (the API lists balance transactions; the audit, verify.ts,
  // walks them by id): unlisted, so no listing index (issue 36, bytes per charge). Entries are only the
  // pending credits since issue 36; a merchant's balance is the sum of its account's lines in postings.
  postings: collection<PostingDoc>([{ fields: ["source_id"] }], { unlisted: true }),
  ledger_entries: collection<LedgerEntryDoc>(
    [
      { fields: ["merchant_id", "currency"] },
      { fields: ["livemode", "bucket", "settled", "available_on"] },
      // A refund draws on its charge's pending credit while unsettled (ledger.ts): only those are in the
      // index (IndexSpec.where), which a credit leaves when it settles, and an available one never enters
      // (issue 36: 80 bytes per charge).
      { fields: ["source_id"], where: { settled: false } },
      // The upgrade at open looks for entries written before postings existed, oldest first, and each
      // movement's together (upgrade.ts): only those are in these indexes (IndexSpec.where), so they are
      // empty once upgraded instead of holding every entry (issue 36: 147 bytes per charge).
      { fields: ["created_at", "id"], where: { posting_id: null } },
      { fields: ["source_id", "type"], where: { posting_id: null } },
    ],
    // An integer in its column and index (store/port.ts, CollectionSpec.timestamps; issue 36).
    { unlisted: true, timestamps: ["available_on"] },
  ),
  balances: collection<BalanceDoc>([{ fields: ["merchant_id"] }]),
  // listBalanceTransactions: every filter is served by an index (issue 36 measures them): the merchant's
  // page and time range, the environment's by type, by source, by cashout (sparse: only once allocated);
  // the reconciliation's queue of what no cashout has taken yet (sparse: null once taken).
  fee_overrides: collection<FeeOverrideDoc>([]),
  balance_transactions: collection<BalanceTransactionDoc>([
    // Ending in the listing order (created_at, id), so a page is read from the index in order (issue 36).
    { fields: ["livemode", "merchant_id", "created_at", "id"] },
    { fields: ["livemode", "type", "created_at", "id"] },
    // By source in the listing order too: without created_at, id SQLite (no statistics) walks the
    // environment's listing index rather than sort a source's few movements.
    { fields: ["source_id", "created_at", "id"] },
    { fields: ["cashout_id", "created_at", "id"], sparse: true },
    { fields: ["merchant_id", "currency", "reconcile_at"], sparse: true },
  ]),
};

/** The store as the ledger area sees it: its own collections and the kernel's (kernel/store.ts). */
export type LedgerStore = AreaStore<typeof ledgerCollections>;
export type LedgerTx = AreaTx<typeof ledgerCollections>;
export type LedgerDocs = AreaDocs<typeof ledgerCollections>;
