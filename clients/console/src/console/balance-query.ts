// The balance transactions page's address → the API's query (listBalanceTransactions). Pure functions,
// unit-tested in balance-query.test.ts. The page keeps a created range as two UTC dates (`created_from`,
// `created_to`, both days included), which is what a person picks; the API takes instants
// (`created_gte`, `created_lt`: spec/resources/balance-transactions.tsp BalanceTransactionListParameters).

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The filters of the page's address the API takes as they are. */
export const PASSED_FILTERS = ["merchant_id", "type", "source", "cashout_id"] as const;

/** A UTC date (`2026-11-28`) as the instant its day starts, or null when it is not a date. */
function startOfDay(day: string): Date | null {
  if (!DAY.test(day)) return null;
  const at = new Date(`${day}T00:00:00.000Z`);
  // `2026-02-30` parses to March: refuse what is not a day of the calendar.
  return Number.isNaN(at.getTime()) || at.toISOString().slice(0, 10) !== day ? null : at;
}

/**
 * The API's `created_gte` / `created_lt` for a range of UTC days, both included: from the start of
 * `from` to the start of the day after `to`. A part that is empty or not a date is left out.
 */
export function createdRange(from: string | undefined, to: string | undefined): Record<string, string> {
  const range: Record<string, string> = {};
  const start = from ? startOfDay(from) : null;
  if (start) range.created_gte = start.toISOString();
  const end = to ? startOfDay(to) : null;
  if (end) range.created_lt = new Date(end.getTime() + 86_400_000).toISOString();
  return range;
}

/** Why a created range cannot be asked for, in words, or null when it can (or is not given). */
export function createdRangeProblem(from: string | undefined, to: string | undefined): string | null {
  if (from && !startOfDay(from)) return `“Created from” is not a date: ${from}. Use YYYY-MM-DD.`;
  if (to && !startOfDay(to)) return `“Created to” is not a date: ${to}. Use YYYY-MM-DD.`;
  if (from && to && from > to) return `“Created from” (${from}) is after “Created to” (${to}): nothing can match.`;
  return null;
}

/**
 * The API query for the page's address: the filters passed as they are, the created range as instants,
 * and, for the JSON list only, `limit` and the cursors (the CSV is the whole filtered list: they do not
 * apply to it).
 */
export function balanceTransactionQuery(
  address: Record<string, string>,
  options: { csv?: boolean } = {},
): Record<string, string> {
  const query: Record<string, string> = {};
  for (const name of PASSED_FILTERS) if (address[name]) query[name] = address[name];
  Object.assign(query, createdRange(address.created_from, address.created_to));
  if (!options.csv) {
    for (const name of ["limit", "starting_after", "ending_before"]) if (address[name]) query[name] = address[name];
  }
  return query;
}

/**
 * The file name a CSV download gets: what it holds, so two downloads do not overwrite each other
 * (`balance-transactions-co_….csv` for a cashout's reconciliation, `…-mch_…-2026-11-01-to-2026-11-30.csv`).
 */
export function csvFileName(address: Record<string, string>, today: string): string {
  const parts = ["balance-transactions"];
  if (address.cashout_id) parts.push(address.cashout_id);
  else if (address.merchant_id) parts.push(address.merchant_id);
  if (address.type) parts.push(address.type);
  if (address.source) parts.push(address.source);
  if (address.created_from || address.created_to) {
    parts.push(`${address.created_from ?? "start"}-to-${address.created_to ?? today}`);
  } else if (!address.cashout_id) parts.push(today); // a cashout's reconciliation does not change: no date
  // Only what a file name may hold on every system.
  return `${parts.join("-").replace(/[^0-9A-Za-z_.-]/g, "_")}.csv`;
}
