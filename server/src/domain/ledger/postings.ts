import type { Where } from "../../store/port.ts";
import type { Clock } from "../kernel/clock.ts";
import { DomainError } from "../kernel/errors.ts";
import { newId } from "../kernel/ids.ts";
import { type Account, accountName, type MerchantBucket, parseMerchantAccount } from "./accounts.ts";
import { balanceTransactionOf } from "./balance-transactions.ts";
import type { BalanceDoc, LedgerEntryDoc, LedgerTx, PostingDoc, PostingType } from "./records.ts";

// The ledger's kernel: the one way money moves (DESIGN §8). A posting is two or more lines that add up
// to zero; it is refused otherwise, before anything is written. Its merchant lines change the merchant's
// balance with one conditional update, so no bucket goes below zero whatever runs concurrently (unless
// the line says it may: the documented exception, below). The posting, its lines and the balance change
// are written in the caller's transaction, with the change that caused them: all of it or none.

// One record holds each fact (issue 36, bytes per charge): a posting's lines are its accounts' movements,
// and nothing copies them. A line gets a record of its own (a ledger entry) only when something changes
// about it after the posting: a capture credit waiting in a merchant's `pending` bucket, which settles
// later (ledger.ts settleDue) and which refunds draw on meanwhile (drawFromPendingCredit). Every other line
// lives in its posting alone; balances and the audit (verify.ts) add up postings' lines. Databases written
// before kept an entry for every line: those still read, and the audit takes them as the copies they are.

/**
 * Whether a posting's line is kept as a ledger entry as well: a credit to a merchant's `pending` bucket,
 * the one kind of line with a state of its own (settled, drawn). Also the audit's rule (verify.ts).
 */
export function isPendingCredit(line: { account: Account | string; amount: number }): boolean {
  if (line.amount <= 0) return false;
  // A stored line names its account; a new one carries it (no parsing on the posting's path).
  const account = typeof line.account === "string" ? parseMerchantAccount(line.account) : line.account;
  return account !== null && "merchantId" in account && account.bucket === "pending";
}

/** A merchant's balance in one currency is stored under this id. */
export const balanceId = (merchantId: string, currency: string) => `${merchantId}:${currency}`;

export interface Line {
  account: Account;
  /** Signed minor units: credits positive, debits negative; never 0. */
  amount: number;
  /** A pending capture credit's settlement date (settleDue moves it to `available` then). */
  availableOn?: string | null;
  /**
   * This debit may take the merchant's bucket below zero. Only a dispute may (issue 31): the card
   * network takes the money whether or not the merchant still has it, and the merchant owes it back
   * (docs/money.md). Refunds and cashouts never do: they are refused with `insufficient_balance`.
   */
  overdraft?: boolean;
}

export interface PostingInput {
  livemode: boolean;
  currency: string;
  type: PostingType;
  sourceId: string;
  lines: Line[];
  /** The platform's fee this posting takes (its `platform:fee_revenue` line), for the balance transaction. */
  fee?: number;
  /** A fixed id (the upgrade of an existing database makes its postings' ids from the entries they group). */
  id?: string;
  /** When the movement happened; default now, on the environment's clock. */
  at?: string;
  /** The balance transaction's source when it is not the posting's (a settlement shows its charge). */
  shownSource?: string;
  /**
   * When the money became available, when not the posting's time (a settlement: its credit's
   * `available_on`, so that the reconciliation's order does not depend on when the job ran).
   */
  availableAt?: string;
}

/** A posting whose lines do not add up to zero, or are not whole minor units: a programming error (500). */
export class UnbalancedPostingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnbalancedPostingError";
  }
}

/**
 * Throws UnbalancedPostingError unless the lines are at least two, each a non-zero safe integer, adding
 * up to zero, and touch at most one merchant. Use cases validate amounts first; this is the last line
 * before money moves.
 */
export function assertBalanced(lines: readonly Line[]): void {
  if (lines.length < 2) throw new UnbalancedPostingError(`a posting needs two or more lines, got ${lines.length}`);
  let sum = 0;
  const merchants = new Set<string>();
  for (const line of lines) {
    if (!Number.isSafeInteger(line.amount) || line.amount === 0) {
      throw new UnbalancedPostingError(
        `a line of ${line.amount} on ${accountName(line.account)}: must be a non-zero integer of minor units`,
      );
    }
    sum += line.amount;
    if ("merchantId" in line.account) merchants.add(line.account.merchantId);
  }
  if (!Number.isSafeInteger(sum) || sum !== 0) {
    throw new UnbalancedPostingError(
      `a posting's lines must add up to zero, these add up to ${sum}: ${lines.map((l) => `${accountName(l.account)} ${l.amount}`).join(", ")}`,
    );
  }
  if (merchants.size > 1)
    throw new UnbalancedPostingError(`a posting touches one merchant at most, this one ${merchants.size}`);
}

/**
 * Writes one posting inside `tx`: checks it balances, changes the merchant's balance (a debit its bucket
 * does not cover throws `insufficient_balance`, which rolls the whole transaction back), and inserts the
 * posting and an entry for each pending credit among its lines (isPendingCredit), returned as `entries`.
 */
export async function postPosting(
  tx: LedgerTx,
  clock: Clock,
  input: PostingInput,
): Promise<{ posting: PostingDoc; entries: LedgerEntryDoc[] }> {
  assertBalanced(input.lines);
  const at = input.at ?? clock.createdAt(input.livemode);
  let merchantId: string | null = null;
  const change: Partial<Record<MerchantBucket, number>> = {};
  const mayOverdraw = new Set<MerchantBucket>();
  for (const line of input.lines) {
    if (!("merchantId" in line.account)) continue;
    merchantId = line.account.merchantId;
    const bucket = line.account.bucket;
    if (bucket === "disputed") continue; // not part of the Balance the API shows (issue 31 decides)
    change[bucket] = (change[bucket] ?? 0) + line.amount;
    if (line.overdraft) mayOverdraw.add(bucket);
  }
  if (merchantId !== null) await applyToBalance(tx, input, merchantId, change, mayOverdraw, at);

  const posting: PostingDoc = {
    id: input.id ?? newId("txn"),
    livemode: input.livemode,
    created_at: at,
    type: input.type,
    currency: input.currency,
    source_id: input.sourceId,
    merchant_id: merchantId,
    lines: input.lines.map((l) => ({ account: accountName(l.account), amount: l.amount })),
    fee: input.fee ?? 0,
  };
  const entries = input.lines.flatMap((line): LedgerEntryDoc[] => {
    if (!("merchantId" in line.account) || !isPendingCredit(line)) return [];
    return [
      {
        id: newId("le"),
        livemode: input.livemode,
        created_at: at,
        posting_id: posting.id,
        account: accountName(line.account),
        merchant_id: line.account.merchantId,
        currency: input.currency,
        bucket: "pending",
        amount: line.amount,
        type: input.type,
        source_id: input.sourceId,
        available_on: line.availableOn ?? null,
        settled: false,
        drawn: 0,
      },
    ];
  });
  await tx.insert("postings", posting);
  for (const entry of entries) await tx.insert("ledger_entries", entry);
  // The merchant's view of it (listBalanceTransactions), in the same transaction.
  if (merchantId !== null) {
    await tx.insert(
      "balance_transactions",
      balanceTransactionOf(posting, merchantId, input.lines, input.shownSource, input.availableAt),
    );
  }
  return { posting, entries };
}

/** The merchant's balance changes by `change`, in one update conditional on every debited bucket covering it. */
async function applyToBalance(
  tx: LedgerTx,
  input: PostingInput,
  merchantId: string,
  change: Partial<Record<MerchantBucket, number>>,
  mayOverdraw: Set<MerchantBucket>,
  at: string,
): Promise<void> {
  const id = balanceId(merchantId, input.currency);
  const inc: Partial<Record<MerchantBucket, number>> = {};
  const expect: Where<BalanceDoc> = {};
  for (const bucket of ["available", "pending"] as const) {
    const delta = change[bucket] ?? 0;
    if (delta === 0) continue;
    inc[bucket] = delta;
    // A debit is conditional on the bucket covering it: the check and the decrement are one atomic update.
    if (delta < 0 && !mayOverdraw.has(bucket)) expect[bucket] = { $gte: -delta };
  }
  const updated = await tx.update("balances", id, { inc, set: { updated_at: at } }, expect);
  if (updated) return;
  const current = await tx.get("balances", id);
  if (!current) throw new Error(`balance ${id} missing: ensureBalance must run first`);
  const short = (["available", "pending"] as const).find((b) => {
    const delta = change[b] ?? 0;
    return delta < 0 && !mayOverdraw.has(b) && current[b] < -delta;
  });
  throw new DomainError(
    "insufficient_balance",
    `The merchant's ${short ?? "available"} ${input.currency} balance does not cover ${-(change[short ?? "available"] ?? 0)}.`,
    { param: "amount" },
  );
}
