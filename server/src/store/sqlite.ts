// The embedded adapter (the default, so `npm start` works on a fresh machine): one better-sqlite3 connection,
// one table per collection holding the JSON document plus, as real columns, the fields every query
// orders or partitions by (id, livemode, created_at) and every field an index names (the hot fields).
// The document stays whole and is what reads return; a hot field's column is a copy of its value, kept
// in step by every insert and update, so indexes and conditions read the column instead of parsing the
// document (json_extract), and an update rewrites only the indexes of the fields it changed.
//
// better-sqlite3 is synchronous and the port is async. On a file, writes are group-committed (see
// lockForWriting and unit below): every transaction and every single write is a savepoint in one outer
// transaction that commits once per turn of the event loop, and its caller hears of it only after that
// commit; a read outside a transaction waits for that commit, so it sees committed data only. An async
// mutex lets one unit at a time use the writer, so none can interleave with, or observe half of,
// another. In memory (tests, the benchmark's in-process rows) there is one connection: a transaction
// holds the mutex from BEGIN IMMEDIATE to COMMIT, and operations outside one run synchronously when it
// is free.

import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { Worker } from "node:worker_threads";
import Database from "better-sqlite3";
import {
  assertCollection,
  assertDoc,
  assertLimit,
  assertOrder,
  assertPage,
  assertSystemFields,
  collectionNames,
  incrementBase,
  Mutex,
  normalizeChanges,
  type Term,
  TxRun,
  terms,
  txGuard,
} from "./common.ts";
import {
  type BaseDoc,
  type Changes,
  type CollectionSpecs,
  DuplicateKeyError,
  type IndexSpec,
  type Order,
  type Page,
  type PageResult,
  type Scalar,
  type Store,
  type StoreOps,
  type StoreReadiness,
  type TxOps,
  UnknownCursorError,
  type Where,
} from "./port.ts";

type Loose = Record<string, BaseDoc>;
type Param = string | number | bigint | null;

/** Synchronous forms of the port's operations, over loosely typed documents. */
interface SyncOps {
  insert(collection: string, doc: BaseDoc): void;
  get(collection: string, id: string): BaseDoc | null;
  findOne(collection: string, where: Where<BaseDoc>): BaseDoc | null;
  findAll(collection: string, where: Where<BaseDoc>, limit?: number, order?: Order<BaseDoc>): BaseDoc[];
  list(collection: string, where: Where<BaseDoc>, page: Page): PageResult<BaseDoc>;
  update(collection: string, id: string, changes: Changes<BaseDoc>, expect?: Where<BaseDoc>): BaseDoc | null;
  delete(collection: string, id: string, expect?: Where<BaseDoc>): boolean;
  deleteMany(collection: string, where: Where<BaseDoc>): number;
}

/** The columns every table has for the fields every document has (port.ts, BaseDoc). */
const SYSTEM_COLUMNS = new Set(["id", "livemode", "created_at"]);

/** One collection's table: which fields have a column of their own (every field an index names, besides the system ones). */
interface Table {
  name: string;
  /** Hot field → its column's quoted name. */
  hot: Map<string, string>;
  /** The columns a document is read from, in decode's order: the system fields', `doc`, each hot field's. */
  select: string;
}

/**
 * The document as stored in the `doc` column: without what has a column of its own, so no byte is
 * kept twice (issue 36: a captured charge's dozen rows kept ~2,000 bytes twice). Left out are the
 * system fields, and each hot field whose value is a string or a finite number, which its column holds
 * exactly; a hot field holding anything else (a boolean, null, an object) stays in the document too,
 * since its column's value (1/0, NULL, JSON text) does not say which it was. decode puts them back.
 */
function encode(t: Table, doc: BaseDoc): string {
  const rest: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(doc)) {
    if (SYSTEM_COLUMNS.has(field)) continue;
    if (t.hot.has(field) && (typeof value === "string" || (typeof value === "number" && Number.isFinite(value))))
      continue;
    rest[field] = value;
  }
  return JSON.stringify(rest);
}

/**
 * The document from its row (the columns of Table.select, in order). The system fields come first, as
 * inserted; a hot field the document lacks is its column's value. A document an earlier version wrote
 * still holds every field: the duplicates carry the same values (JSON.parse keeps the last).
 */
function decode(t: Table, row: Param[]): BaseDoc {
  const json = row[3] as string;
  const doc = JSON.parse(
    `{"id":${JSON.stringify(row[0])},"livemode":${row[1] ? "true" : "false"},"created_at":${JSON.stringify(row[2])}${
      json.length > 2 ? `,${json.slice(1)}` : "}"
    }`,
  ) as Record<string, unknown>;
  let i = 4;
  for (const field of t.hot.keys()) {
    const value = row[i++];
    if (value !== null && value !== undefined && !Object.hasOwn(doc, field)) doc[field] = value;
  }
  return doc as unknown as BaseDoc;
}

/** A hot field's column: prefixed, so no field name can clash with id, livemode, created_at or doc. */
function columnName(field: string): string {
  return `"f_${field}"`;
}

/**
 * What a hot field's column holds: exactly what json_extract gives for the field in the document, so
 * a condition on the column matches what the same condition on the document matches. Missing and null
 * are NULL, booleans 1 and 0, numbers and strings themselves, objects and arrays their JSON text.
 */
function columnValue(value: unknown): Param {
  if (value === undefined || value === null) return null;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number" || typeof value === "string") return value;
  return JSON.stringify(value);
}

/** Field names are checked identifiers (common.ts), so inlining them into the JSON path is safe. */
function expression(table: Table, field: string): string {
  if (SYSTEM_COLUMNS.has(field)) return field;
  return table.hot.get(field) ?? `json_extract(doc, '$.${field}')`;
}

/**
 * json_extract gives JSON true/false as 1/0 (and hot columns hold them so), so booleans are compared
 * as 1/0 (a field must therefore not mix booleans with the numbers 0 and 1). Null is never bound: it
 * becomes IS NULL, which also matches a missing field.
 */
function bind(value: Exclude<Scalar, null>): Param {
  if (typeof value === "boolean") return value ? 1 : 0;
  return value;
}

const COMPARISONS = { lt: "<", lte: "<=", gt: ">", gte: ">=" } as const;

function termSql(table: Table, term: Term, params: Param[]): string {
  const e = expression(table, term.field);
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
      return parts.length === 1 ? (parts[0] as string) : `(${parts.join(" OR ")})`;
    }
    default:
      params.push(bind(term.value as Exclude<Scalar, null>));
      return `${e} ${COMPARISONS[term.op]} ?`;
  }
}

function whereSql(table: Table, where: Where<BaseDoc> | undefined, params: Param[]): string[] {
  return terms(where).map((t) => termSql(table, t, params));
}

function clause(conditions: string[]): string {
  return conditions.length === 0 ? "" : ` WHERE ${conditions.join(" AND ")}`;
}

/** Prepared statements kept per SQL text; $in lists of varying length make the set open-ended, hence the bound. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Pages the write-ahead log may hold before the connection that commits copies them into the database
 * itself (SQLite's automatic checkpoint, 1,000 pages by default). The checkpointer thread (below)
 * copies them long before; this only bounds the log should that thread stop.
 */
const WAL_AUTOCHECKPOINT_PAGES = 32_768;
/** How often the checkpointer thread copies committed pages from the write-ahead log into the database. */
const CHECKPOINT_INTERVAL_MS = 1000;

/** How long a write waits for another connection (another process on the file) to finish its own. */
const BUSY_TIMEOUT_MS = 5000;
/** How long scrub() tries to truncate the write-ahead log while other connections keep it busy. */
const SCRUB_TIMEOUT_MS = 10_000;

/**
 * The checkpointer: a thread with its own connection that copies committed pages from the write-ahead
 * log into the database file, off the event loop. Left to the committing connection (SQLite's
 * default), that copy and its two fsyncs land inside whichever commit crosses the threshold, and that
 * request, and every one queued behind it, waits milliseconds longer than the rest: the latency tail
 * under steady load (docs/operating.md "Production"). It runs once a second, not more: once it has
 * copied everything, the next write starts the log over, and starting over costs that write an fsync
 * of the log's new header, so the log is left to grow for a second between starts. Only passive
 * checkpoints: they never block the writer. One that waits for writers (RESTART or TRUNCATE) once the
 * log passed a bound stalled every request behind it for 100 ms and more at 500 charges/s (p99 147 ms
 * against 37 ms passive only, npm run bench, built-500); WAL_AUTOCHECKPOINT_PAGES bounds the log.
 * Committed transactions are durable in the log already: checkpoints change where they live, not whether.
 */
const CHECKPOINTER = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path);
// exec only, never a prepared statement: on Node 24, better-sqlite3 12 aborts the process when a
// statement object outlives the thread's environment at its exit (its destructor removes a cleanup
// hook from an environment already gone: WiseLibs/better-sqlite3#1476, #1515). exec keeps none.
db.exec("PRAGMA busy_timeout = 1000");
const checkpoint = () => {
  try {
    db.exec("PRAGMA wal_checkpoint(PASSIVE)");
  } catch {
    // Busy or closing: the next turn tries again, and the writer's own threshold bounds the log meanwhile.
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on("message", () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

function startCheckpointer(path: string): Worker {
  const worker = new Worker(CHECKPOINTER, {
    eval: true,
    workerData: {
      path,
      driver: createRequire(import.meta.url).resolve("better-sqlite3"),
      intervalMs: CHECKPOINT_INTERVAL_MS,
    },
    // A few megabytes of heap is all it ever uses; the limits keep a thread per store small.
    resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1 },
  });
  worker.unref();
  return worker;
}

/** Whether SQLite refused an operation because another connection holds the file (SQLITE_BUSY and its extended codes). */
function busy(error: unknown): boolean {
  return error instanceof Database.SqliteError && error.code.startsWith("SQLITE_BUSY");
}

/**
 * Puts the file in WAL mode (a setting the file keeps). The switch from the rollback journal needs the
 * file to itself, and SQLite answers SQLITE_BUSY at once, without waiting out busy_timeout, when
 * another connection has it open at that moment: two instances, or a cluster's workers, opening one new
 * file together met here about one start in three (test/ops/startup.test.ts, "two instances start").
 * So the switch is tried again, briefly asleep between tries (this runs once, before the server
 * listens), until the other connection has made the switch or BUSY_TIMEOUT_MS is over.
 */
export function useWal(db: Pick<Database.Database, "pragma">, timeoutMs = BUSY_TIMEOUT_MS): void {
  const deadline = Date.now() + timeoutMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      // The mode in force afterwards: the old one when the switch could not be made.
      if (db.pragma("journal_mode = WAL", { simple: true }) === "wal") return;
    } catch (error) {
      if (!busy(error)) throw error;
    }
    if (Date.now() > deadline)
      throw Object.assign(new Error("could not switch the database to WAL mode: another connection kept it busy"), {
        code: "SQLITE_BUSY",
      });
    Atomics.wait(pause, 0, 0, 5 + Math.floor(Math.random() * 10));
  }
}

/**
 * The database holds card fingerprints, key digests and sealed card data: its directory (when created
 * here) and files are readable by the owner only. The file is created before SQLite opens it, because
 * SQLite gives its -wal and -shm files the database file's permissions; files an older version left
 * readable by others are narrowed.
 */
function ownerOnly(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  if (!existsSync(path)) closeSync(openSync(path, "a", 0o600));
  if (process.platform === "win32") return;
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    const mode = statSync(file, { throwIfNoEntry: false })?.mode;
    if (mode !== undefined && (mode & 0o077) !== 0) chmodSync(file, mode & 0o700);
  }
}

/** What only the SQLite store offers, for tests that check how it runs a query. */
export interface SqliteDiagnostics {
  /** SQLite's query plan (EXPLAIN QUERY PLAN, one line per step) for findAll with these arguments. */
  explain(collection: string, where: Where<BaseDoc>, limit?: number, order?: Order<BaseDoc>): string[];
}

/**
 * Creates each collection's table, its hot fields' columns and its indexes, and brings a database an
 * earlier version made up to date, in one transaction (several processes may open one file at once):
 * - a hot field without its column (a new index, or a database from before hot columns) gets one,
 *   filled from the documents;
 * - an index of this adapter's naming that the spec no longer asks for, or asks for differently, is
 *   dropped: every index costs every write. A column no index names any more is dropped too, once the
 *   values the documents left out of themselves (encode) are back in them; An index over the document (json_extract) is what versions
 *   before hot columns made, and such a version may have written documents since their columns were
 *   filled, so the columns are filled again then.
 * Returns, per unique index, the clash SQLite reports ("table.column, …") → the fields it covers.
 */
function createSchema(
  db: Database.Database,
  specs: Record<string, { indexes: IndexSpec[] }>,
  tables: Map<string, Map<string, string>>,
): Map<string, string> {
  const uniqueFields = new Map<string, string>();
  for (const [name, spec] of Object.entries(specs)) {
    const hot = tables.get(name) ?? new Map<string, string>();
    const hotColumns = [...hot.values()].map((column) => `, ${column}`).join("");
    db.exec(
      `CREATE TABLE IF NOT EXISTS "${name}" (id TEXT PRIMARY KEY, livemode INTEGER NOT NULL, created_at TEXT NOT NULL, doc TEXT NOT NULL${hotColumns})`,
    );
    const present = new Set((db.pragma(`table_info("${name}")`) as { name: string }[]).map((c) => `"${c.name}"`));
    const added = [...hot].filter(([, column]) => !present.has(column));
    for (const [, column] of added) db.exec(`ALTER TABLE "${name}" ADD COLUMN ${column}`);

    const column = (field: string) => (SYSTEM_COLUMNS.has(field) ? field : (hot.get(field) as string));
    const wanted = new Map<string, string>([
      [`${name}__list`, `CREATE INDEX "${name}__list" ON "${name}" (livemode, created_at, id)`],
    ]);
    for (const index of spec.indexes) {
      // The name encodes the fields; the SQL compared below catches any other change of definition.
      const indexName = `${name}__${index.unique ? "u" : "i"}__${index.fields.join("__")}`;
      const columns = index.fields.map(column);
      // A sparse index is partial: SQLite uses it for a query that constrains the column to a value.
      const partial = index.sparse ? ` WHERE ${columns[columns.length - 1]} IS NOT NULL` : "";
      wanted.set(
        indexName,
        `CREATE ${index.unique ? "UNIQUE " : ""}INDEX "${indexName}" ON "${name}" (${columns.join(", ")})${partial}`,
      );
      if (index.unique)
        uniqueFields.set(columns.map((c) => `${name}.${c.replace(/"/g, "")}`).join(", "), index.fields.join(","));
    }
    const existing = db
      .prepare<[string]>(
        `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`,
      )
      .all(name) as { name: string; sql: string }[];
    let olderLayout = false;
    for (const index of existing) {
      if (!index.name.startsWith(`${name}__`) || wanted.get(index.name) === index.sql) continue;
      if (index.sql.includes("json_extract(doc")) olderLayout = true;
      db.exec(`DROP INDEX "${index.name}"`);
    }
    // A column no index names any more holds values its documents left out (encode): they go back into
    // the documents, and the column goes.
    const hotSet = new Set(hot.values());
    for (const stale of [...present].filter((c) => c.startsWith('"f_') && !hotSet.has(c))) {
      const path = `'$.${stale.slice(3, -1)}'`;
      db.exec(
        `UPDATE "${name}" SET doc = json_set(doc, ${path}, ${stale}) WHERE ${stale} IS NOT NULL AND json_type(doc, ${path}) IS NULL`,
      );
      db.exec(`ALTER TABLE "${name}" DROP COLUMN ${stale}`);
    }
    const refill = olderLayout ? [...hot] : added;
    if (refill.length > 0) {
      const sets = refill.map(([field, column]) => `${column} = json_extract(doc, '$.${field}')`);
      db.exec(`UPDATE "${name}" SET ${sets.join(", ")}`);
    }
    for (const sql of wanted.values()) db.exec(sql.replace(/INDEX "/, 'INDEX IF NOT EXISTS "'));
  }
  return uniqueFields;
}

export function openSqliteStore<Docs extends Record<string, BaseDoc>>(options: {
  path: string;
  collections: CollectionSpecs<Docs>;
  /**
   * Refuse the outer store inside its own transaction (common.ts, txGuard). Default on; the server
   * turns it off in production, where it costs every promise a hook.
   */
  guard?: boolean;
}): Store<Docs> & StoreReadiness & SqliteDiagnostics {
  const names = collectionNames(options.collections);
  const specs = options.collections as Record<string, { indexes: IndexSpec[] }>;
  const memory = options.path === ":memory:";
  if (!memory) ownerOnly(options.path);
  const db = new Database(options.path);
  // First: two processes opening one new file together (two instances, or a cluster's workers, on an
  // empty DATA_DIR) meet at the schema, and the later one waits here for the earlier instead of failing
  // with SQLITE_BUSY (test/ops/startup.test.ts, "two instances start"). At the switch to WAL, where
  // SQLite does not wait, useWal tries again.
  if (!memory) db.pragma("busy_timeout = 5000");
  // Deleted and overwritten content is zeroed in the file, not left in free space (see scrub()).
  db.pragma("secure_delete = ON");
  if (!memory) {
    useWal(db);
    // Safe with WAL (a power cut may lose the last commits, never corrupt), and much faster than FULL.
    db.pragma("synchronous = NORMAL");
    db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    // A unit's savepoint keeps the first version of each page it changes in a sub-journal, so that it
    // can roll back alone (see unit below): in memory, not in temporary files written for every unit.
    db.pragma("temp_store = MEMORY");
  }

  const hotFields = new Map<string, Map<string, string>>();
  for (const [name, spec] of Object.entries(specs)) {
    const hot = new Map<string, string>();
    for (const index of spec.indexes) {
      for (const field of index.fields) if (!SYSTEM_COLUMNS.has(field)) hot.set(field, columnName(field));
    }
    hotFields.set(name, hot);
  }
  const uniqueFields = memory
    ? createSchema(db, specs, hotFields)
    : db.transaction(() => createSchema(db, specs, hotFields)).immediate();

  const tables = new Map<string, Table>();
  for (const [name, hot] of hotFields)
    tables.set(name, { name, hot, select: ["id", "livemode", "created_at", "doc", ...hot.values()].join(", ") });

  /** The table of a collection the specs declare; anything else is refused before it reaches SQL. */
  function table(collection: string): Table {
    const found = tables.get(collection);
    if (found !== undefined) return found;
    assertCollection(names, collection);
    throw new TypeError(`no table for ${collection}`);
  }

  function duplicateKey(collection: string, error: unknown): unknown {
    if (!(error instanceof Database.SqliteError)) return error;
    if (error.code === "SQLITE_CONSTRAINT_PRIMARYKEY") return new DuplicateKeyError(collection, "id");
    if (error.code === "SQLITE_CONSTRAINT_UNIQUE") {
      const columns = /UNIQUE constraint failed: (.*)$/.exec(error.message)?.[1];
      return new DuplicateKeyError(collection, (columns && uniqueFields.get(columns)) ?? "id");
    }
    return error;
  }

  /** The SELECT findOne and findAll run, and its parameters. */
  function selectSql(
    collection: string,
    where: Where<BaseDoc>,
    limit: number | undefined,
    order?: Order<BaseDoc>,
  ): { sql: string; params: Param[] } {
    const t = table(collection);
    assertLimit(limit);
    assertOrder(order);
    const params: Param[] = [];
    const conditions = whereSql(t, where, params);
    // NULLs sort first in ascending order, as MongoDB puts null and missing fields first.
    const orderBy = order
      ? `${expression(t, order.by)} ${order.direction.toUpperCase()}, id ${order.direction.toUpperCase()}`
      : "created_at DESC, id DESC";
    let sql = `SELECT ${t.select} FROM "${collection}"${clause(conditions)} ORDER BY ${orderBy}`;
    if (limit !== undefined) {
      sql += " LIMIT ?";
      params.push(limit);
    }
    return { sql, params };
  }

  /**
   * The synchronous operations over one connection, with its own prepared statements. Writes assume
   * the caller made them atomic: inside a transaction, or (in memory, one connection in one thread)
   * as one synchronous call.
   */
  function connectionOps(conn: Database.Database): SyncOps & { statement(sql: string): Database.Statement<Param[]> } {
    const statements = new Map<string, Database.Statement<Param[]>>();
    function statement(sql: string): Database.Statement<Param[]> {
      let stmt = statements.get(sql);
      if (stmt === undefined) {
        stmt = conn.prepare<Param[]>(sql);
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
    const inserts = new Map<string, Database.Statement<Param[]>>();
    const gets = new Map<string, Database.Statement<Param[]>>();
    function insertStatement(t: Table): Database.Statement<Param[]> {
      let stmt = inserts.get(t.name);
      if (stmt === undefined) {
        const columns = t.select.split(", ");
        stmt = conn.prepare<Param[]>(
          `INSERT INTO "${t.name}" (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
        );
        inserts.set(t.name, stmt);
      }
      return stmt;
    }
    function getStatement(t: Table): Database.Statement<Param[]> {
      let stmt = gets.get(t.name);
      if (stmt === undefined) {
        stmt = conn.prepare<Param[]>(`SELECT ${t.select} FROM "${t.name}" WHERE id = ?`).raw(true);
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
      const { sql, params } = selectSql(collection, where, limit, order);
      const t = table(collection);
      return (statement(sql).all(...params) as Param[][]).map((row) => decode(t, row));
    }

    /** The stored document `id` if it matches `expect`. */
    function selectById(t: Table, id: string, expect: Where<BaseDoc> | undefined): BaseDoc | null {
      const params: Param[] = [id];
      const conditions = whereSql(t, expect, params);
      const row = (
        conditions.length === 0
          ? getStatement(t).get(id)
          : statement(`SELECT ${t.select} FROM "${t.name}"${clause(["id = ?", ...conditions])}`).get(...params)
      ) as Param[] | undefined;
      return row === undefined ? null : decode(t, row);
    }

    return {
      statement,

      insert(collection, doc) {
        const t = table(collection);
        assertDoc(doc);
        const params: Param[] = [doc.id, doc.livemode ? 1 : 0, doc.created_at, encode(t, doc)];
        for (const field of t.hot.keys()) params.push(columnValue((doc as unknown as Record<string, unknown>)[field]));
        try {
          insertStatement(t).run(...params);
        } catch (error) {
          throw duplicateKey(collection, error);
        }
      },

      get(collection, id) {
        const t = table(collection);
        const row = getStatement(t).get(id) as Param[] | undefined;
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
        const params: Param[] = [];
        const conditions = whereSql(t, where, params);
        const cursor = page.startingAfter ?? page.endingBefore;
        const newerFirst = page.endingBefore === undefined;
        if (cursor !== undefined) {
          // Looked up in the environment only, whatever the filter (Page in port.ts).
          const cursorParams: Param[] = [cursor];
          const environment = where.livemode === undefined ? {} : { livemode: where.livemode };
          const located = clause(["id = ?", ...whereSql(t, environment, cursorParams)]);
          const createdAt = statement(`SELECT created_at FROM "${collection}"${located}`).get(...cursorParams);
          if (createdAt === undefined) {
            throw new UnknownCursorError(
              collection,
              page.startingAfter === undefined ? "endingBefore" : "startingAfter",
              cursor,
            );
          }
          // Row values compare (created_at, id) lexicographically, which is exactly the listing order.
          conditions.push(newerFirst ? "(created_at, id) < (?, ?)" : "(created_at, id) > (?, ?)");
          params.push(createdAt as string, cursor);
        }
        const direction = newerFirst ? "DESC" : "ASC";
        params.push(page.limit + 1);
        const rows = statement(
          `SELECT ${t.select} FROM "${collection}"${clause(conditions)} ORDER BY created_at ${direction}, id ${direction} LIMIT ?`,
        ).all(...params) as Param[][];
        const hasMore = rows.length > page.limit;
        if (hasMore) rows.pop();
        if (!newerFirst) rows.reverse();
        return { data: rows.map((row) => decode(t, row)), hasMore };
      },

      update(collection, id, changes, expect) {
        const t = table(collection);
        const { set, inc } = normalizeChanges(changes);
        const found = selectById(t, id, expect);
        if (found === null) return null;
        const doc = found as unknown as Record<string, unknown>;
        if (set.length === 0 && inc.length === 0) return doc as unknown as BaseDoc;
        for (const [field, value] of set) doc[field] = value;
        for (const [field, by] of inc) doc[field] = incrementBase(id, field, doc[field]) + by;
        const updated = doc as unknown as BaseDoc;
        assertSystemFields(updated);
        const json = JSON.stringify(updated);
        // Only the columns of the fields that changed are written, so only their indexes are rewritten;
        // an unchanged hot field stays in its column, left out of the document as before.
        const columns = ["doc = ?"];
        const params: Param[] = [encode(t, updated)];
        const changed = (field: string) => {
          const column = SYSTEM_COLUMNS.has(field) ? field : t.hot.get(field);
          if (column === undefined) return;
          columns.push(`${column} = ?`);
          params.push(field === "livemode" ? (updated.livemode ? 1 : 0) : columnValue(doc[field]));
        };
        for (const [field] of set) changed(field);
        for (const [field] of inc) changed(field);
        params.push(id);
        try {
          statement(`UPDATE "${collection}" SET ${columns.join(", ")} WHERE id = ?`).run(...params);
        } catch (error) {
          throw duplicateKey(collection, error);
        }
        // Reparsed so the caller gets exactly what is stored, sharing no objects with `changes`.
        return JSON.parse(json) as BaseDoc;
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

  const writer = connectionOps(db);
  // The writer waits for other connections (another process on the file) without blocking the event
  // loop: lockForWriting retries. Schema creation above waited the ordinary way.
  if (!memory) db.pragma("busy_timeout = 0");

  const mutex = new Mutex();
  const guard = txGuard(options.guard ?? true);

  /** The port's async operations: reads on `reads` through `read`, writes on the writer through `write`. */
  function asyncOps(
    reads: SyncOps,
    read: <T>(op: () => T) => Promise<T>,
    write: <T>(op: () => T) => Promise<T>,
  ): StoreOps<Loose> {
    return {
      insert: (collection, doc) => write(() => writer.insert(collection, doc)),
      get: (collection, id) => read(() => reads.get(collection, id)),
      findOne: (collection, where) => read(() => reads.findOne(collection, where)),
      findAll: (collection, where, limit, order) => read(() => reads.findAll(collection, where, limit, order)),
      list: (collection, where, page) => read(() => reads.list(collection, where, page)),
      update: (collection, id, changes, expect) => write(() => writer.update(collection, id, changes, expect)),
      delete: (collection, id, expect) => write(() => writer.delete(collection, id, expect)),
      deleteMany: (collection, where) => write(() => writer.deleteMany(collection, where)),
    };
  }

  const begin = writer.statement("BEGIN IMMEDIATE");
  const commit = writer.statement("COMMIT");
  const rollback = writer.statement("ROLLBACK");
  const savepoint = writer.statement("SAVEPOINT unit");
  const releaseSavepoint = writer.statement("RELEASE unit");
  const rollbackToSavepoint = writer.statement("ROLLBACK TO unit");
  const probe = writer.statement("SELECT 1");

  /** In memory: runs a synchronous operation once no transaction holds the connection. */
  async function outside<T>(op: () => T): Promise<T> {
    guard.assertOutside();
    if (!mutex.locked) return op();
    await mutex.acquire();
    try {
      return op();
    } finally {
      mutex.release();
    }
  }

  // Group commit (a file). Every write, a transaction or a single operation, is a unit: a savepoint
  // inside one outer transaction that the writer opens for the first unit and commits once the event
  // loop has run what it had to run (setImmediate), for every unit that joined it meanwhile. A unit's
  // caller hears of its outcome only after that commit, so whatever was acknowledged is durable (as
  // durable as one commit: docs/operating.md "Production"); a unit that fails rolls back to its
  // savepoint alone. Under load one commit (one write of each changed page to the log) carries many
  // requests' writes instead of one, which is most of what a commit costs. Units run one at a time
  // (the mutex), each in one synchronous stretch when fn awaits only tx operations.

  interface Group {
    committed: Promise<void>;
    resolve: () => void;
    reject: (error: unknown) => void;
  }
  let group: Group | null = null;

  /** With the mutex held: opens the outer transaction unless one is open, waiting while another connection writes. */
  async function lockForWriting(): Promise<Group> {
    if (group) return group;
    const deadline = Date.now() + BUSY_TIMEOUT_MS;
    for (;;) {
      try {
        begin.run();
        break;
      } catch (error) {
        if (!busy(error) || Date.now() > deadline) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    let resolve = () => {};
    let reject: (error: unknown) => void = () => {};
    const committed = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Rejections reach the units that wait for it; none is left unhandled when none waits.
    committed.catch(() => {});
    group = { committed, resolve, reject };
    setImmediate(flush);
    return group;
  }

  /** With the mutex held: commits the outer transaction, settling every unit in it. */
  function commitGroup(): void {
    const current = group;
    if (current === null) return;
    group = null;
    try {
      commit.run();
    } catch (error) {
      if (db.inTransaction) rollback.run();
      current.reject(error);
      return;
    }
    current.resolve();
  }

  function flush(): void {
    void mutex.acquire().then(() => {
      try {
        commitGroup();
      } finally {
        mutex.release();
      }
    });
  }

  /** Runs `work` as one unit of the current group; resolves once the group has committed. */
  async function unit<T>(work: () => T | Promise<T>): Promise<T> {
    await mutex.acquire();
    let joined: Group;
    let result: T;
    try {
      joined = await lockForWriting();
      savepoint.run();
      try {
        result = await work();
        releaseSavepoint.run();
      } catch (error) {
        if (db.inTransaction) {
          rollbackToSavepoint.run();
          releaseSavepoint.run();
        } else if (group === joined) {
          // SQLite rolled the whole outer transaction back (an I/O error, a full disk): every unit
          // in it is lost, and each of their callers hears so.
          group = null;
          joined.reject(new Error("the write was lost: its group commit rolled back", { cause: error }));
        }
        throw error;
      }
    } finally {
      mutex.release();
    }
    await joined.committed;
    return result;
  }

  async function write<T>(op: () => T): Promise<T> {
    guard.assertOutside();
    return unit(op);
  }

  /**
   * A read outside a transaction sees committed data only: while a group is open, it waits for the
   * group's commit (and any that follows at once), then reads in the same synchronous stretch.
   */
  async function read<T>(op: () => T): Promise<T> {
    guard.assertOutside();
    while (group !== null) {
      try {
        await group.committed;
      } catch {
        // A group that failed left nothing behind to hide; its units report the failure.
      }
    }
    return op();
  }

  const checkpointer = memory ? null : startCheckpointer(options.path);

  const store: Store<Loose> & StoreReadiness & SqliteDiagnostics = {
    kind: "sqlite",
    ...(memory ? asyncOps(writer, outside, outside) : asyncOps(writer, read, write)),

    explain(collection, where, limit, order) {
      const { sql, params } = selectSql(collection, where, limit, order);
      return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((row) => row.detail);
    },

    async transaction(fn) {
      guard.assertOutside();
      const run = new TxRun();
      // tx operations run directly on the writer, whose lock is this run's until it ends (and
      // synchronously: an operation fn does not await has still run before fn's next line).
      const direct = <T>(op: () => T) => run.track(op);
      const tx: TxOps<Loose> = {
        ...asyncOps(writer, direct, direct),
        afterCommit: (callback) => run.afterCommit(callback),
      };
      const body = () => guard.run(run, () => run.settle(() => fn(tx)));
      let result: Awaited<ReturnType<typeof fn>>;
      if (!memory) {
        try {
          result = await unit(body);
        } finally {
          run.active = false;
        }
        run.committed();
        return result;
      }
      await mutex.acquire();
      try {
        begin.run();
        result = await body();
        commit.run();
      } catch (error) {
        if (db.inTransaction) rollback.run();
        throw error;
      } finally {
        run.active = false;
        mutex.release();
      }
      run.committed();
      return result;
    },

    async ready() {
      // In memory through the lock like any operation: a transaction that holds the connection for
      // long makes readiness wait (and the caller's bound answer), as it makes every request wait.
      await (memory ? outside : read)(() => probe.get());
    },

    async scrub() {
      if (memory) return;
      // The checkpointer thread may be copying at this moment, and SQLite runs one checkpoint at a time:
      // a truncating checkpoint that finds it busy is tried again once that copy is over.
      const deadline = Date.now() + SCRUB_TIMEOUT_MS;
      for (;;) {
        guard.assertOutside();
        await mutex.acquire();
        let done: boolean;
        try {
          // What the writer has yet to commit is committed first: the log can only be emptied after.
          commitGroup();
          try {
            const [result] = db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
            done = result?.busy === 0;
          } catch (error) {
            if (!busy(error)) throw error;
            done = false;
          }
        } finally {
          mutex.release();
        }
        if (done) return;
        if (Date.now() > deadline)
          throw new Error("could not checkpoint the write-ahead log: the database stayed busy");
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },

    async close() {
      guard.assertOutside();
      await mutex.acquire();
      try {
        commitGroup();
        if (checkpointer) {
          const exited = new Promise((resolve) => checkpointer.once("exit", resolve));
          // Held while it closes its connection: an unreferenced thread would let the process end first.
          checkpointer.ref();
          checkpointer.postMessage("close");
          await exited;
        }
        db.close();
      } finally {
        mutex.release();
      }
    },
  };
  // The operations only depend on each collection's documents being BaseDocs, which Docs guarantees.
  return store as unknown as Store<Docs> & StoreReadiness & SqliteDiagnostics;
}
