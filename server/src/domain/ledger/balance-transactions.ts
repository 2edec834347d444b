import type { Page, PageResult, Where } from "../../store/port.ts";
import type { Caller } from "../kernel/caller.ts";
import { inEnvironment } from "../kernel/environment.ts";
import type { CsvBody, QueryParams } from "../kernel/operations.ts";
import { iso } from "../kernel/time.ts";
import type { Line } from "./postings.ts";
import type { BalanceTransactionDoc, BalanceTransactionType, LedgerStore, PostingDoc, PostingType } from "./records.ts";

// Balance transactions (spec/resources/balance-transactions.tsp, getBalanceTransaction and
// listBalanceTransactions): the merchant's view of the ledger. One per posting that touches a merchant's
// balance, written by postPosting in the posting's transaction, with the posting's `txn_` id; and the
// halves of reconciliation adjustments (reconciliation.ts), which move no money.

const TYPE_OF: Record<PostingType, BalanceTransactionType | null> = {
  capture: "charge",
  capture_reversal: "charge_failure",
  refund: "refund",
  refund_reversal: "refund_failure",
  settlement: "settlement",
  cashout: "cashout",
  cashout_reversal: "cashout_reversal",
  cashout_paid: null, // platform accounts only: never reaches here
  dispute: "dispute",
  dispute_reversal: "dispute_reversal",
  fee: "fee", // a dispute's fee (disputes/); a charge's fee is a field of its `charge` transaction
  adjustment: "adjustment",
};

/**
 * The balance transaction of a posting that touches `merchantId`'s balance. `net` is what the posting
 * changed in the merchant's balance (pending + available), except a settlement's: its money was already
 * counted pending by its charge, and what it shows is what became available. `source` overrides the
 * posting's (a settlement names its charge, not the capture credit it settles); `availableAt` is when the
 * money became available when that is not the posting's time (a settlement's credit's `available_on`).
 *
 * What the reconciliation queues (`reconcile_at`) is exactly what entered or left `available` outside a
 * cashout, so the queue always adds up to the available balance and a cashout can always be allocated in
 * full (docs/money.md "Reconciling a cashout"): for every queued transaction `net` equals its change to
 * `available`. A posting that moves `available` and `pending` at once by different amounts (other than a
 * settlement) would break that, so none is written (postRefund splits a refund that draws on both).
 */
export function balanceTransactionOf(
  posting: PostingDoc,
  merchantId: string,
  lines: readonly Line[],
  source?: string,
  availableAt?: string,
): BalanceTransactionDoc {
  const type = TYPE_OF[posting.type];
  if (type === null) throw new Error(`a ${posting.type} posting does not touch a merchant's balance`);
  let pending = 0;
  let available = 0;
  let availableOn: string | null = availableAt ?? null;
  for (const line of lines) {
    if (!("merchantId" in line.account)) continue;
    if (line.account.bucket === "pending") {
      pending += line.amount;
      if (line.amount > 0 && line.availableOn) availableOn = line.availableOn;
    } else if (line.account.bucket === "available") available += line.amount;
  }
  const net = posting.type === "settlement" ? available : pending + available;
  const queued = available !== 0 && posting.type !== "cashout";
  if (queued && net !== available) {
    throw new Error(
      `balance transaction ${posting.id}: a ${posting.type} that moves available (${available}) and pending (${pending}) at once cannot be reconciled`,
    );
  }
  return {
    id: posting.id,
    livemode: posting.livemode,
    created_at: posting.created_at,
    merchant_id: merchantId,
    type,
    currency: posting.currency,
    amount: net + posting.fee,
    fee: posting.fee,
    net,
    status: pending !== 0 && posting.type !== "settlement" ? "pending" : "available",
    available_on: availableOn ?? posting.created_at,
    source_id: source ?? posting.source_id,
    cashout_id: null,
    reconcile_at: queued ? (availableAt ?? posting.created_at) : null,
  };
}

/** listBalanceTransactions' filters (the contract's query parameters). */
export type BalanceTransactionFilter = Pick<
  QueryParams<"listBalanceTransactions">,
  "merchant_id" | "type" | "created_gte" | "created_lt" | "source" | "cashout_id"
>;

export function createBalanceTransactions(store: LedgerStore): BalanceTransactions {
  return {
    /** getBalanceTransaction: one of the caller's environment (404 otherwise). */
    async get(caller: Caller, id: string): Promise<BalanceTransactionDoc> {
      return inEnvironment(await store.get("balance_transactions", id), caller.livemode, "balance_transaction", id);
    },

    /**
     * listBalanceTransactions with `Accept: text/csv` (BalanceTransactionCsv): every matching transaction,
     * newest first, read from the store one page at a time as the transport asks for lines, so memory
     * holds one page whatever the list's length.
     */
    csv(caller: Caller, filter: BalanceTransactionFilter): CsvBody {
      const where = whereOf(caller.livemode, filter);
      return {
        kind: "csv",
        async *lines() {
          yield csvLine(CSV_COLUMNS);
          let after: string | undefined;
          for (;;) {
            const page = await store.list("balance_transactions", where, { limit: CSV_PAGE, startingAfter: after });
            let chunk = "";
            for (const t of page.data) chunk += csvLine(csvRow(t));
            if (chunk) yield chunk;
            const last = page.data.at(-1);
            if (!page.hasMore || !last) return;
            after = last.id;
          }
        },
      };
    },

    /** listBalanceTransactions: newest first, each filter an equality or range on an indexed field. */
    list(caller: Caller, filter: BalanceTransactionFilter, page: Page): Promise<PageResult<BalanceTransactionDoc>> {
      return store.list("balance_transactions", whereOf(caller.livemode, filter), page);
    },
  };
}

/** The CSV's columns (BalanceTransactionCsv in the contract), in order. */
const CSV_COLUMNS = [
  "id",
  "type",
  "amount",
  "fee",
  "net",
  "currency",
  "status",
  "available_on",
  "source",
  "cashout_id",
  "merchant_id",
  "created_at",
] as const;

/** Rows per store read of the CSV export (the store's page size: Page.limit). */
const CSV_PAGE = 100;

const csvRow = (t: BalanceTransactionDoc): (string | number)[] => [
  t.id,
  t.type,
  t.amount,
  t.fee,
  t.net,
  t.currency,
  t.status,
  t.available_on,
  t.source_id,
  t.cashout_id ?? "",
  t.merchant_id,
  t.created_at,
];

/** One RFC 4180 line: a field with a comma, quote or line break is quoted, its quotes doubled. */
function csvLine(fields: readonly (string | number)[]): string {
  return `${fields
    .map((f) => {
      const text = String(f);
      return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
    })
    .join(",")}\r\n`;
}

/** The store's condition for a filter (also the CSV export's). */
export function whereOf(livemode: boolean, filter: BalanceTransactionFilter): Where<BalanceTransactionDoc> {
  const where: Where<BalanceTransactionDoc> = { livemode };
  if (filter.merchant_id) where.merchant_id = filter.merchant_id;
  if (filter.type) where.type = filter.type;
  if (filter.source) where.source_id = filter.source;
  if (filter.cashout_id) where.cashout_id = filter.cashout_id;
  // created_at is stored in one fixed-width format (kernel/time.ts iso): the bounds are written in it.
  const gte = filter.created_gte ? iso(new Date(filter.created_gte)) : undefined;
  const lt = filter.created_lt ? iso(new Date(filter.created_lt)) : undefined;
  if (gte !== undefined && lt !== undefined) where.created_at = { $gte: gte, $lt: lt };
  else if (gte !== undefined) where.created_at = { $gte: gte };
  else if (lt !== undefined) where.created_at = { $lt: lt };
  return where;
}

/** The ledger's balance transactions service (getBalanceTransaction, listBalanceTransactions). */
export interface BalanceTransactions {
  /** getBalanceTransaction: one of the caller's environment (404 otherwise). */
  get(caller: Caller, id: string): Promise<BalanceTransactionDoc>;
  /**
   * listBalanceTransactions with `Accept: text/csv` (BalanceTransactionCsv): every matching transaction,
   * newest first, read from the store one page at a time as the transport asks for lines, so memory
   * holds one page whatever the list's length.
   */
  csv(caller: Caller, filter: BalanceTransactionFilter): CsvBody;
  /** listBalanceTransactions: newest first, each filter an equality or range on an indexed field. */
  list(caller: Caller, filter: BalanceTransactionFilter, page: Page): Promise<PageResult<BalanceTransactionDoc>>;
}
