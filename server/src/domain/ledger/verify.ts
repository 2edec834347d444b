import type { StoreOps, Where } from "../../store/port.ts";
import type { CashoutDocs } from "../cashouts/records.ts";
import type { ChargeDocs } from "../charges/records.ts";
import type { DisputeDocs } from "../disputes/records.ts";
import { parseMerchantAccount } from "./accounts.ts";
import { isPendingCredit } from "./postings.ts";
import type { LedgerDocs, PostingDoc } from "./records.ts";

// `npm run admin -- ledger verify` (and the crash suites' audits): adds everything up again, from the
// records alone, and reports every difference from what the ledger's rules say must hold:
// - every posting's lines are non-zero whole minor units adding up to zero;
// - every entry belongs to a posting and is one of its lines; every pending credit among a posting's lines
//   has its entry (postings.ts isPendingCredit: the only lines written as entries too; a database written
//   before kept an entry for every line, and those are taken as the copies they are);
// - each merchant balance equals the sum of its account's lines, bucket by bucket, and is not negative
//   (unless a chargeback overdrew it: the one documented exception, docs/money.md);
// - all accounts together add up to zero in each environment and currency;
// - cashouts in transit holds exactly the pending and in-transit cashouts, paid out exactly the paid ones;
// - the acquirer's clearing account holds exactly what charges captured less what was refunded, less what
//   chargebacks took back and the merchant has not won back;
// - every posting that touches a merchant has its balance transaction; what waits for a cashout (the
//   reconciliation's queue) adds up to the merchant's `available`, and each cashout's transactions add up
//   to its amount (docs/money.md "Reconciling a cashout").
// Reads every posting and entry once, in pages; memory grows with the number of accounts and postings.
//
// The one declared read across areas' walls (kernel/store.ts): an audit of the ledger against the
// charges, cashouts and disputes it stands for, read-only (`list` alone) and named here, so it cannot
// write another area's records, nor read any other collection.

type AuditDocs = LedgerDocs &
  Pick<ChargeDocs, "charges"> &
  Pick<CashoutDocs, "cashouts"> &
  Pick<DisputeDocs, "disputes">;

/** What the audit reads: the ledger's collections and, read-only, the three its platform accounts stand for. */
export type LedgerAuditStore = Pick<StoreOps<AuditDocs>, "findAll">;

export interface LedgerReport {
  postings: number;
  entries: number;
  balances: number;
  /** Each account's total, per environment and currency: `<test|live> <currency> <account>` → minor units. */
  totals: Map<string, number>;
  /** Every difference found, in words; empty when the ledger holds. */
  differences: string[];
}

type Scanned =
  | "postings"
  | "ledger_entries"
  | "balances"
  | "cashouts"
  | "charges"
  | "disputes"
  | "balance_transactions";

const SCAN_PAGE = 500;

/**
 * Every document of `collection`, page by page in id order: the primary key's order, which every
 * collection has, listed or not (postings and ledger entries are unlisted: port.ts, CollectionSpec).
 */
async function scan<C extends Scanned>(
  store: LedgerAuditStore,
  collection: C,
  visit: (doc: AuditDocs[C]) => void,
  where: Where<AuditDocs[C]> = {},
): Promise<void> {
  let after: string | undefined;
  for (;;) {
    // The id condition is added to the caller's own conditions (none of them is on the id).
    const page: Where<AuditDocs[C]> = after === undefined ? where : { ...where, id: { $gt: after } };
    const docs = await store.findAll(collection, page, SCAN_PAGE, { by: "id", direction: "asc" });
    for (const doc of docs) visit(doc);
    if (docs.length < SCAN_PAGE) return;
    after = docs.at(-1)?.id;
  }
}

const env = (livemode: boolean) => (livemode ? "live" : "test");
const add = (map: Map<string, number>, key: string, amount: number) => map.set(key, (map.get(key) ?? 0) + amount);

/**
 * A posting's entries against its lines: each entry is one of the lines (as many times as it appears at
 * most), and each pending credit among the lines has its entry (what settles it and what refunds draw on).
 */
function compareEntries(p: PostingDoc, fromEntries: string[], differences: string[]): void {
  const left = new Map<string, number>();
  for (const line of p.lines) add(left, `${line.account} ${line.amount}`, 1);
  const stray: string[] = [];
  for (const entry of fromEntries) {
    const count = left.get(entry) ?? 0;
    if (count === 0) stray.push(entry);
    else left.set(entry, count - 1);
  }
  const own = p.lines.map((l) => `${l.account} ${l.amount}`);
  if (stray.length > 0) {
    differences.push(`posting ${p.id}: entries [${stray.join(", ")}] are not among its lines [${own.join(", ")}]`);
  }
  // What is left in `left` are the lines no entry took: a pending credit among them has no entry.
  const unrecorded = p.lines.filter((line) => {
    const key = `${line.account} ${line.amount}`;
    const count = left.get(key) ?? 0;
    if (count === 0 || !isPendingCredit(line)) return false;
    left.set(key, count - 1);
    return true;
  });
  if (unrecorded.length > 0) {
    differences.push(
      `posting ${p.id} (${p.type} of ${p.source_id}): its pending credit [${unrecorded.map((l) => `${l.account} ${l.amount}`).join(", ")}] has no entry, so it would never settle`,
    );
  }
}

export async function verifyLedger(store: LedgerAuditStore): Promise<LedgerReport> {
  const differences: string[] = [];
  const totals = new Map<string, number>();
  /** posting id → `account amount` of its entries; each must be one of the posting's own lines. */
  const byPosting = new Map<string, string[]>();
  /** `<test|live> <currency> <account>` of merchant accounts a chargeback debited: they may be below zero. */
  const overdrawn = new Set<string>();
  let entries = 0;
  await scan(store, "ledger_entries", (e) => {
    entries++;
    if (!e.posting_id) {
      differences.push(`entry ${e.id} (${e.type} of ${e.source_id}) belongs to no posting`);
      return;
    }
    const lines = byPosting.get(e.posting_id) ?? [];
    lines.push(`${e.account} ${e.amount}`);
    byPosting.set(e.posting_id, lines);
  });

  let postings = 0;
  /** Postings that touch a merchant's balance: each has a balance transaction of its id. */
  const shown = new Set<string>();
  await scan(store, "postings", (p) => {
    postings++;
    if (p.merchant_id !== null) shown.add(p.id);
    let sum = 0;
    for (const line of p.lines) {
      if (!Number.isSafeInteger(line.amount) || line.amount === 0) {
        differences.push(`posting ${p.id} has a line of ${line.amount} on ${line.account}`);
      }
      sum += line.amount;
      // Every account's total comes from the postings' lines, the one record of each movement.
      add(totals, `${env(p.livemode)} ${p.currency} ${line.account}`, line.amount);
      if ((p.type === "dispute" || p.type === "fee") && line.amount < 0) {
        overdrawn.add(`${env(p.livemode)} ${p.currency} ${line.account}`);
      }
    }
    if (sum !== 0)
      differences.push(`posting ${p.id} (${p.type} of ${p.source_id}) does not balance: its lines add up to ${sum}`);
    if (p.lines.length < 2) differences.push(`posting ${p.id} has ${p.lines.length} line(s)`);
    compareEntries(p, byPosting.get(p.id) ?? [], differences);
    byPosting.delete(p.id);
  });
  for (const id of byPosting.keys()) differences.push(`entries name posting ${id}, which does not exist`);

  // The merchant's view: balance transactions, the reconciliation's queue and each cashout's contents.
  /** `<test|live> <currency> <merchant>` → what waits in the queue; cashout id → what it paid out. */
  const queued = new Map<string, number>();
  const paidOut = new Map<string, number>();
  await scan(store, "balance_transactions", (t) => {
    shown.delete(t.id);
    if (t.reconcile_at !== null) add(queued, `${env(t.livemode)} ${t.currency} ${t.merchant_id}`, t.net);
    if (t.cashout_id !== null) add(paidOut, t.cashout_id, t.net);
  });
  for (const id of shown) differences.push(`posting ${id} moves a merchant's money but has no balance transaction`);

  let balances = 0;
  const seen = new Set<string>();
  await scan(store, "balances", (b) => {
    balances++;
    for (const bucket of ["available", "pending"] as const) {
      const key = `${env(b.livemode)} ${b.currency} merchant:${b.merchant_id}:${bucket}`;
      seen.add(key);
      const sum = totals.get(key) ?? 0;
      if (sum !== b[bucket]) {
        differences.push(`balance ${b.id}: ${bucket} is ${b[bucket]}, its account's lines add up to ${sum}`);
      }
      if (b[bucket] < 0 && !overdrawn.has(key)) {
        differences.push(`balance ${b.id}: ${bucket} is negative (${b[bucket]}) and no chargeback overdrew it`);
      }
    }
    // Against the account's lines (the balance itself is compared with them above).
    const available = totals.get(`${env(b.livemode)} ${b.currency} merchant:${b.merchant_id}:available`) ?? 0;
    const waiting = queued.get(`${env(b.livemode)} ${b.currency} ${b.merchant_id}`) ?? 0;
    if (waiting !== available) {
      differences.push(
        `balance ${b.id}: its available lines add up to ${available}, the balance transactions waiting for a cashout to ${waiting}`,
      );
    }
  });
  const zero = new Map<string, number>();
  for (const [key, total] of totals) {
    const [livemode = "", currency = "", account = ""] = key.split(" ");
    add(zero, `${livemode} ${currency}`, total);
    const merchant = parseMerchantAccount(account);
    if (merchant && merchant.bucket !== "disputed" && !seen.has(key) && total !== 0) {
      differences.push(`${account} (${livemode} ${currency}) has lines adding up to ${total} but no balance`);
    }
  }
  for (const [key, total] of zero) if (total !== 0) differences.push(`all accounts (${key}) add up to ${total}, not 0`);

  // The platform's accounts against the objects they stand for.
  const expected = new Map<string, number>();
  await scan(store, "cashouts", (c) => {
    const where =
      c.status === "pending" || c.status === "in_transit"
        ? "cashouts:in_transit"
        : c.status === "paid"
          ? "cashouts:paid_out"
          : null;
    if (where) add(expected, `${env(c.livemode)} ${c.currency} ${where}`, c.amount);
    const contents = paidOut.get(c.id) ?? 0;
    if (contents !== c.amount) {
      differences.push(`cashout ${c.id} of ${c.amount}: its balance transactions add up to ${contents}`);
    }
  });
  await scan(store, "charges", (c) => {
    const net = c.amount_captured - c.amount_refunded;
    if (net !== 0) add(expected, `${env(c.livemode)} ${c.currency} acquirer:clearing`, -net);
  });
  // A chargeback's amount went back to the network at opening and comes back only if the merchant wins.
  await scan(store, "disputes", (d) => {
    if (d.status === "needs_response" || d.status === "under_review" || d.status === "lost") {
      add(expected, `${env(d.livemode)} ${d.currency} acquirer:clearing`, d.amount);
    }
  });
  const accounts = ["cashouts:in_transit", "cashouts:paid_out", "acquirer:clearing"];
  const keys = new Set([
    ...expected.keys(),
    ...[...totals.keys()].filter((k) => accounts.includes(k.split(" ")[2] ?? "")),
  ]);
  for (const key of keys) {
    const want = expected.get(key) ?? 0;
    const got = totals.get(key) ?? 0;
    if (want !== got)
      differences.push(`${key} is ${got}; the cashouts, charges and disputes it stands for say ${want}`);
  }
  return { postings, entries, balances, totals, differences };
}
