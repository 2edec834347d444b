// The SQLite store's query compilation: the port's conditions (common.ts, terms) as SQL over a table's
// columns, a hot field's column instead of the document wherever there is one.

import { assertLimit, assertOrder, type Term, terms } from "../common.ts";
import type { BaseDoc, Order, Page, Scalar, Where } from "../port.ts";
import { docJson } from "./compact.ts";
import { type Param, SYSTEM_COLUMNS, type Table } from "./schema.ts";
import { timeColumn } from "./time.ts";

/** Field names are checked identifiers (common.ts), so inlining them into the JSON path is safe. */
export function expression(table: Table, field: string): string {
  if (SYSTEM_COLUMNS.has(field)) return field;
  // A field without a column is read from the document, deflated or not (compact.ts).
  return table.hot.get(field) ?? `json_extract(${docJson(table.name)}, '$.${field}')`;
}

/**
 * json_extract gives JSON true/false as 1/0 (and hot columns hold them so), so booleans are compared
 * as 1/0 (a field must therefore not mix booleans with the numbers 0 and 1). Null is never bound: it
 * becomes IS NULL, which also matches a missing field.
 */
function bindScalar(value: Exclude<Scalar, null>): Param {
  if (typeof value === "boolean") return value ? 1 : 0;
  return value;
}

/**
 * Below every timestamp's integer (time.ts keeps them safe integers): what the empty string is among
 * texts, so `{ $gt: "" }`, the port's way to ask for any value at all (a queue's present timestamps),
 * keeps its meaning on an integer column.
 */
const BELOW_EVERY_TIMESTAMP = Number.MIN_SAFE_INTEGER - 1;

/** A timestamp compared with a timestamp's column: its integer (time.ts), "" below them all. */
function timeBound(field: string, value: Exclude<Scalar, null>): Param {
  return value === "" ? BELOW_EVERY_TIMESTAMP : timeColumn(field, value);
}

const COMPARISONS = { lt: "<", lte: "<=", gt: ">", gte: ">=" } as const;

function termSql(table: Table, term: Term, params: Param[]): string {
  const e = expression(table, term.field);
  // A timestamp's column holds an integer (time.ts): the value compared with it is one too.
  const bind =
    term.field === "created_at" || table.timestamps.has(term.field)
      ? (value: Exclude<Scalar, null>): Param => timeBound(term.field, value)
      : bindScalar;
  switch (term.op) {
    case "eq":
      if (term.value === null) return `${e} IS NULL`;
      params.push(bind(term.value));
      return `${e} = ?`;
    case "ne":
      if (term.value === null) return `${e} IS NOT NULL`;
      // IS NOT is null-safe: a missing or null field differs from any value, as in MongoDB.
      params.push(bind(term.value));
      return `${e} IS NOT ?`;
    case "in": {
      const present = term.values.filter((v) => v !== null);
      const parts: string[] = [];
      if (present.length > 0) {
        for (const v of present) params.push(bind(v));
        parts.push(`${e} IN (${present.map(() => "?").join(", ")})`);
      }
      if (present.length < term.values.length) parts.push(`${e} IS NULL`);
      if (parts.length === 0) return "0";
      const [only] = parts;
      return parts.length === 1 && only !== undefined ? only : `(${parts.join(" OR ")})`;
    }
    default:
      // terms() gives a range a string or a number, never null
      if (term.value === null) throw new TypeError(`${term.op} on ${term.field} needs a string or a number`);
      params.push(bind(term.value));
      return `${e} ${COMPARISONS[term.op]} ?`;
  }
}

export function whereSql(table: Table, where: Where<BaseDoc> | undefined, params: Param[]): string[] {
  return terms(where).map((t) => termSql(table, t, params));
}

export function clause(conditions: string[]): string {
  return conditions.length === 0 ? "" : ` WHERE ${conditions.join(" AND ")}`;
}

/** The SELECT findOne and findAll run on table `t`, and its parameters. */
export function selectSql(
  t: Table,
  where: Where<BaseDoc>,
  limit: number | undefined,
  order?: Order<BaseDoc>,
): { sql: string; params: Param[] } {
  assertLimit(limit);
  assertOrder(order);
  const params: Param[] = [];
  const conditions = whereSql(t, where, params);
  // NULLs sort first in ascending order, as MongoDB puts null and missing fields first.
  const orderBy = order
    ? `${expression(t, order.by)} ${order.direction.toUpperCase()}, id ${order.direction.toUpperCase()}`
    : "created_at DESC, id DESC";
  let sql = `SELECT ${t.select} FROM "${t.name}"${clause(conditions)} ORDER BY ${orderBy}`;
  if (limit !== undefined) {
    sql += " LIMIT ?";
    params.push(limit);
  }
  return { sql, params };
}

/**
 * The SELECT list runs on table `t` for one page (port.ts, Page): newest first, or oldest first before
 * a cursor (endingBefore), `cursorCreatedAt` being the cursor document's created_at (its column's
 * integer, time.ts); one row more
 * than the page, which says whether there are more.
 */
export function listSql(
  t: Table,
  where: Where<BaseDoc>,
  page: Page,
  cursorCreatedAt: number | undefined,
): { sql: string; params: Param[] } {
  const params: Param[] = [];
  const conditions = whereSql(t, where, params);
  const cursor = page.startingAfter ?? page.endingBefore;
  const newerFirst = page.endingBefore === undefined;
  if (cursor !== undefined && cursorCreatedAt !== undefined) {
    // Row values compare (created_at, id) lexicographically, which is exactly the listing order.
    conditions.push(newerFirst ? "(created_at, id) < (?, ?)" : "(created_at, id) > (?, ?)");
    params.push(cursorCreatedAt, cursor);
  }
  const direction = newerFirst ? "DESC" : "ASC";
  params.push(page.limit + 1);
  return {
    sql: `SELECT ${t.select} FROM "${t.name}"${clause(conditions)} ORDER BY created_at ${direction}, id ${direction} LIMIT ?`,
    params,
  };
}
