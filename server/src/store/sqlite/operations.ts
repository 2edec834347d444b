// The SQLite store's operations as synchronous calls on one connection (sqlite.ts makes them async).

import type Database from "better-sqlite3";
import {
  assertDoc,
  assertPage,
  assertSystemFields,
  incrementBase,
  normalizeChanges,
  type StoredDoc,
} from "../common.ts";
import {
  type BaseDoc,
  type Changes,
  type Order,
  type Page,
  type PageResult,
  UnknownCursorError,
  type Where,
} from "../port.ts";
import { clause, listSql, selectSql, whereSql } from "./query.ts";
import { columnOf, decode, encode, type Param, SYSTEM_COLUMNS, type Table } from "./schema.ts";

/** Synchronous forms of the port's operations, over loosely typed documents. */
export interface SyncOps {
  insert(collection: string, doc: BaseDoc): void;
  get(collection: string, id: string): BaseDoc | null;
  findOne(collection: string, where: Where<BaseDoc>): BaseDoc | null;
  findAll(collection: string, where: Where<BaseDoc>, limit?: number, order?: Order<BaseDoc>): BaseDoc[];
  list(collection: string, where: Where<BaseDoc>, page: Page): PageResult<BaseDoc>;
  update(collection: string, id: string, changes: Changes<BaseDoc>, expect?: Where<BaseDoc>): BaseDoc | null;
  delete(collection: string, id: string, expect?: Where<BaseDoc>): boolean;
  deleteMany(collection: string, where: Where<BaseDoc>): number;
}

/**
 * A prepared statement as this module runs it: positional parameters, and rows as arrays of column
 * values (`raw`), a document's in Table.select's order — or one value where a query selects one column
 * (`pluck`: a cursor's created_at, an integer: time.ts), which its caller reads as unknown and checks.
 */
type Statement = Database.Statement<Param[], Row>;
type Row = Param[];

/** Prepared statements kept per SQL text; $in lists of varying length make the set open-ended, hence the bound. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * The synchronous operations over one connection, with its own prepared statements. Writes assume
 * the caller made them atomic: inside a transaction, or (in memory, one connection in one thread)
 * as one synchronous call.
 */
/**
 * A set value as the stored document holds it: what JSON.parse(JSON.stringify(value)) gives, without
 * going through text for the primitives. normalizeChanges has let through only JSON values (assertStorable),
 * so the round trip changes nothing but -0 (JSON has no negative zero) and undefined object members
 * (dropped), and gives objects and arrays that the caller's cannot alter.
 */
function storedValue(value: unknown): unknown {
  if (value === null || typeof value !== "object") return Object.is(value, -0) ? 0 : value;
  return JSON.parse(JSON.stringify(value));
}

export function connectionOps(
  conn: Database.Database,
  table: (collection: string) => Table,
  duplicateKey: (collection: string, error: unknown) => unknown,
): SyncOps & { statement(sql: string): Statement } {
  const statements = new Map<string, Statement>();
  function statement(sql: string): Statement {
    let stmt = statements.get(sql);
    if (stmt === undefined) {
      stmt = conn.prepare<Param[], Row>(sql);
      // A query selects one column (a cursor's created_at), plucked, or a document's (Table.select),
      // as arrays for decode.
      if (stmt.reader) {
        if (stmt.columns().length === 1) stmt.pluck(true);
        else stmt.raw(true);
      }
      if (statements.size >= STATEMENT_CACHE_SIZE) {
        const oldest = statements.keys().next().value;
        if (oldest !== undefined) statements.delete(oldest);
      }
      statements.set(sql, stmt);
    }
    return stmt;
  }

  // The statements every call of insert and get runs, per table, prepared at first use.
  const inserts = new Map<string, Statement>();
  const gets = new Map<string, Statement>();
  function insertStatement(t: Table): Statement {
    let stmt = inserts.get(t.name);
    if (stmt === undefined) {
      const columns = t.select.split(", ");
      stmt = conn.prepare<Param[], Row>(
        `INSERT INTO "${t.name}" (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
      );
      inserts.set(t.name, stmt);
    }
    return stmt;
  }
  function getStatement(t: Table): Statement {
    let stmt = gets.get(t.name);
    if (stmt === undefined) {
      stmt = conn.prepare<Param[], Row>(`SELECT ${t.select} FROM "${t.name}" WHERE id = ?`).raw(true);
      gets.set(t.name, stmt);
    }
    return stmt;
  }

  function selectDocs(
    collection: string,
    where: Where<BaseDoc>,
    limit: number | undefined,
    order?: Order<BaseDoc>,
  ): BaseDoc[] {
    const { sql, params } = selectSql(table(collection), where, limit, order);
    const t = table(collection);
    return statement(sql)
      .all(...params)
      .map((row) => decode(t, row));
  }

  /** The stored document `id` if it matches `expect`. */
  function selectById(t: Table, id: string, expect: Where<BaseDoc> | undefined): StoredDoc | null {
    const params: Param[] = [id];
    const conditions = whereSql(t, expect, params);
    const row =
      conditions.length === 0
        ? getStatement(t).get(id)
        : statement(`SELECT ${t.select} FROM "${t.name}"${clause(["id = ?", ...conditions])}`).get(...params);
    return row === undefined ? null : decode(t, row);
  }

  return {
    statement,

    insert(collection, doc) {
      const t = table(collection);
      const fields = assertDoc(doc);
      const params: Param[] = [doc.id, doc.livemode ? 1 : 0, columnOf(t, "created_at", doc.created_at), encode(t, doc)];
      for (const field of t.hot.keys()) params.push(columnOf(t, field, fields[field]));
      try {
        insertStatement(t).run(...params);
      } catch (error) {
        throw duplicateKey(collection, error);
      }
    },

    get(collection, id) {
      const t = table(collection);
      const row = getStatement(t).get(id);
      return row === undefined ? null : decode(t, row);
    },

    findOne(collection, where) {
      return selectDocs(collection, where, 1)[0] ?? null;
    },

    findAll(collection, where, limit, order) {
      return selectDocs(collection, where, limit, order);
    },

    list(collection, where, page) {
      const t = table(collection);
      assertPage(page);
      const cursor = page.startingAfter ?? page.endingBefore;
      let createdAt: number | undefined;
      if (cursor !== undefined) {
        // Looked up in the environment only, whatever the filter (Page in port.ts).
        const cursorParams: Param[] = [cursor];
        const environment = where.livemode === undefined ? {} : { livemode: where.livemode };
        const located = clause(["id = ?", ...whereSql(t, environment, cursorParams)]);
        // One column, plucked: the value itself (an INTEGER NOT NULL column, so a number when the row exists).
        const found: unknown = statement(`SELECT created_at FROM "${collection}"${located}`).get(...cursorParams);
        if (typeof found !== "number") {
          throw new UnknownCursorError(
            collection,
            page.startingAfter === undefined ? "endingBefore" : "startingAfter",
            cursor,
          );
        }
        createdAt = found;
      }
      const { sql, params } = listSql(t, where, page, createdAt);
      const rows = statement(sql).all(...params);
      const hasMore = rows.length > page.limit;
      if (hasMore) rows.pop();
      if (page.endingBefore !== undefined) rows.reverse();
      return { data: rows.map((row) => decode(t, row)), hasMore };
    },

    update(collection, id, changes, expect) {
      const t = table(collection);
      const { set, inc } = normalizeChanges(changes);
      const found = selectById(t, id, expect);
      if (found === null) return null;
      const doc = found;
      if (set.length === 0 && inc.length === 0) return doc;
      // The document was just decoded from its row, so it shares nothing with the caller; only the set
      // values are the caller's, and each is copied as JSON would copy it (storedValue). The caller gets
      // exactly what is stored without the whole document stringified and parsed again for it (issue 36:
      // a charge's updates did that to its events and ledger rows, a twentieth of what it allocated).
      for (const [field, value] of set) doc[field] = storedValue(value);
      for (const [field, by] of inc) doc[field] = incrementBase(id, field, doc[field]) + by;
      const updated = doc;
      assertSystemFields(updated);
      // Only the columns of the fields that changed are written, so only their indexes are rewritten;
      // an unchanged hot field stays in its column, left out of the document as before.
      const columns = ["doc = ?"];
      const params: Param[] = [encode(t, updated)];
      const changed = (field: string) => {
        const column = SYSTEM_COLUMNS.has(field) ? field : t.hot.get(field);
        if (column === undefined) return;
        columns.push(`${column} = ?`);
        params.push(field === "livemode" ? (updated.livemode ? 1 : 0) : columnOf(t, field, doc[field]));
      };
      for (const [field] of set) changed(field);
      for (const [field] of inc) changed(field);
      params.push(id);
      try {
        statement(`UPDATE "${collection}" SET ${columns.join(", ")} WHERE id = ?`).run(...params);
      } catch (error) {
        throw duplicateKey(collection, error);
      }
      return updated;
    },

    delete(collection, id, expect) {
      const t = table(collection);
      const params: Param[] = [id];
      const conditions = ["id = ?", ...whereSql(t, expect, params)];
      return statement(`DELETE FROM "${collection}"${clause(conditions)}`).run(...params).changes > 0;
    },

    deleteMany(collection, where) {
      const t = table(collection);
      const params: Param[] = [];
      const conditions = whereSql(t, where, params);
      return statement(`DELETE FROM "${collection}"${clause(conditions)}`).run(...params).changes;
    },
  };
}
