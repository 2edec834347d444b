// The embedded adapter (the default, so `npm start` works on a fresh machine): one better-sqlite3 connection,
// one table per collection holding the JSON document plus the columns every query orders or partitions by.
//
// better-sqlite3 is synchronous and the connection is shared, while the port is async. An async mutex
// therefore serializes everything: a transaction holds it from BEGIN IMMEDIATE to COMMIT, across every
// await inside fn, and every other operation waits for it, so none can interleave with, or observe half
// of, an open transaction. Operations outside a transaction run synchronously when the lock is free.

import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { dirname } from "node:path";
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
  type Order,
  type Page,
  type PageResult,
  type Scalar,
  type Store,
  type StoreOps,
  type StoreReadiness,
  type TxOps,
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

/** Fields kept in real columns (indexed, used for ordering); every other field is read from the JSON. */
const COLUMNS = new Set(["id", "livemode", "created_at"]);

/** Field names are checked identifiers (common.ts), so inlining them into the JSON path is safe. */
function expression(field: string): string {
  return COLUMNS.has(field) ? field : `json_extract(doc, '$.${field}')`;
}

/**
 * json_extract gives JSON true/false as 1/0, so booleans are compared as 1/0 (a field must therefore
 * not mix booleans with the numbers 0 and 1). Null is never bound: it becomes IS NULL, which also
 * matches a missing field.
 */
function bind(value: Exclude<Scalar, null>): Param {
  if (typeof value === "boolean") return value ? 1 : 0;
  return value;
}

const COMPARISONS = { lt: "<", lte: "<=", gt: ">", gte: ">=" } as const;

function termSql(term: Term, params: Param[]): string {
  const e = expression(term.field);
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

function whereSql(where: Where<BaseDoc> | undefined, params: Param[]): string[] {
  return terms(where).map((t) => termSql(t, params));
}

function clause(conditions: string[]): string {
  return conditions.length === 0 ? "" : ` WHERE ${conditions.join(" AND ")}`;
}

/** Prepared statements kept per SQL text; $in lists of varying length make the set open-ended, hence the bound. */
const STATEMENT_CACHE_SIZE = 500;

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
  const memory = options.path === ":memory:";
  if (!memory) ownerOnly(options.path);
  const db = new Database(options.path);
  // Deleted and overwritten content is zeroed in the file, not left in free space (see scrub()).
  db.pragma("secure_delete = ON");
  if (!memory) {
    db.pragma("journal_mode = WAL");
    // Safe with WAL (a power cut may lose the last commits, never corrupt), and much faster than FULL.
    db.pragma("synchronous = NORMAL");
    db.pragma("busy_timeout = 5000");
  }

  /** Unique index name → the fields it covers, to say which key clashed. */
  const uniqueFields = new Map<string, string>();
  for (const [name, spec] of Object.entries<{ indexes: { fields: string[]; unique?: boolean }[] }>(
    options.collections,
  )) {
    db.exec(
      `CREATE TABLE IF NOT EXISTS "${name}" (id TEXT PRIMARY KEY, livemode INTEGER NOT NULL, created_at TEXT NOT NULL, doc TEXT NOT NULL)`,
    );
    db.exec(`CREATE INDEX IF NOT EXISTS "${name}__list" ON "${name}" (livemode, created_at, id)`);
    for (const index of spec.indexes) {
      // The name encodes the definition, so a changed spec creates a new index instead of silently keeping the old one.
      const indexName = `${name}__${index.unique ? "u" : "i"}__${index.fields.join("__")}`;
      const columns = index.fields.map(expression).join(", ");
      db.exec(`CREATE ${index.unique ? "UNIQUE " : ""}INDEX IF NOT EXISTS "${indexName}" ON "${name}" (${columns})`);
      if (index.unique) uniqueFields.set(indexName, index.fields.join(","));
    }
  }

  const statements = new Map<string, Database.Statement<Param[]>>();
  function statement(sql: string): Database.Statement<Param[]> {
    let stmt = statements.get(sql);
    if (stmt === undefined) {
      stmt = db.prepare<Param[]>(sql);
      // Every query here selects one column (the document, or a cursor's created_at).
      if (stmt.reader) stmt.pluck(true);
      if (statements.size >= STATEMENT_CACHE_SIZE) {
        const oldest = statements.keys().next().value;
        if (oldest !== undefined) statements.delete(oldest);
      }
      statements.set(sql, stmt);
    }
    return stmt;
  }

  function duplicateKey(collection: string, error: unknown): unknown {
    if (!(error instanceof Database.SqliteError)) return error;
    if (error.code === "SQLITE_CONSTRAINT_PRIMARYKEY") return new DuplicateKeyError(collection, "id");
    if (error.code === "SQLITE_CONSTRAINT_UNIQUE") {
      const index = /index '([^']+)'/.exec(error.message)?.[1];
      return new DuplicateKeyError(collection, (index && uniqueFields.get(index)) ?? "id");
    }
    return error;
  }

  function parse(raw: unknown): BaseDoc {
    return JSON.parse(raw as string) as BaseDoc;
  }

  /** The SELECT findOne and findAll run, and its parameters. */
  function selectSql(
    collection: string,
    where: Where<BaseDoc>,
    limit: number | undefined,
    order?: Order<BaseDoc>,
  ): { sql: string; params: Param[] } {
    assertCollection(names, collection);
    assertLimit(limit);
    assertOrder(order);
    const params: Param[] = [];
    const conditions = whereSql(where, params);
    // NULLs sort first in ascending order, as MongoDB puts null and missing fields first.
    const orderBy = order
      ? `${expression(order.by)} ${order.direction.toUpperCase()}, id ${order.direction.toUpperCase()}`
      : "created_at DESC, id DESC";
    let sql = `SELECT doc FROM "${collection}"${clause(conditions)} ORDER BY ${orderBy}`;
    if (limit !== undefined) {
      sql += " LIMIT ?";
      params.push(limit);
    }
    return { sql, params };
  }

  function selectDocs(
    collection: string,
    where: Where<BaseDoc>,
    limit: number | undefined,
    order?: Order<BaseDoc>,
  ): BaseDoc[] {
    const { sql, params } = selectSql(collection, where, limit, order);
    return statement(sql)
      .all(...params)
      .map(parse);
  }

  /** The stored document `id` if it matches `expect`, unparsed. */
  function selectById(collection: string, id: string, expect: Where<BaseDoc> | undefined): unknown {
    const params: Param[] = [id];
    const conditions = ["id = ?", ...whereSql(expect, params)];
    return statement(`SELECT doc FROM "${collection}"${clause(conditions)}`).get(...params);
  }

  function updateRow(collection: string, id: string, changes: Changes<BaseDoc>, expect?: Where<BaseDoc>) {
    const { set, inc } = normalizeChanges(changes);
    const raw = selectById(collection, id, expect);
    if (raw === undefined) return null;
    const doc = parse(raw) as unknown as Record<string, unknown>;
    if (set.length === 0 && inc.length === 0) return doc as unknown as BaseDoc;
    for (const [field, value] of set) doc[field] = value;
    for (const [field, by] of inc) doc[field] = incrementBase(id, field, doc[field]) + by;
    const updated = doc as unknown as BaseDoc;
    assertSystemFields(updated);
    const json = JSON.stringify(updated);
    try {
      statement(`UPDATE "${collection}" SET livemode = ?, created_at = ?, doc = ? WHERE id = ?`).run(
        updated.livemode ? 1 : 0,
        updated.created_at,
        json,
        id,
      );
    } catch (error) {
      throw duplicateKey(collection, error);
    }
    // Reparsed so the caller gets exactly what is stored, sharing no objects with `changes`.
    return JSON.parse(json) as BaseDoc;
  }
  // Outside a transaction the read-modify-write needs its own, so another process on the same file
  // cannot write in between; BEGIN IMMEDIATE takes the write lock before the read.
  const updateInOwnTransaction = db.transaction(updateRow);

  const sync: SyncOps = {
    insert(collection, doc) {
      assertCollection(names, collection);
      assertDoc(doc);
      try {
        statement(`INSERT INTO "${collection}" (id, livemode, created_at, doc) VALUES (?, ?, ?, ?)`).run(
          doc.id,
          doc.livemode ? 1 : 0,
          doc.created_at,
          JSON.stringify(doc),
        );
      } catch (error) {
        throw duplicateKey(collection, error);
      }
    },

    get(collection, id) {
      assertCollection(names, collection);
      const raw = statement(`SELECT doc FROM "${collection}" WHERE id = ?`).get(id);
      return raw === undefined ? null : parse(raw);
    },

    findOne(collection, where) {
      return selectDocs(collection, where, 1)[0] ?? null;
    },

    findAll(collection, where, limit, order) {
      return selectDocs(collection, where, limit, order);
    },

    list(collection, where, page) {
      assertCollection(names, collection);
      assertPage(page);
      const params: Param[] = [];
      const conditions = whereSql(where, params);
      const cursor = page.startingAfter ?? page.endingBefore;
      const newerFirst = page.endingBefore === undefined;
      if (cursor !== undefined) {
        const cursorParams: Param[] = [cursor, ...params];
        const createdAt = statement(`SELECT created_at FROM "${collection}"${clause(["id = ?", ...conditions])}`).get(
          ...cursorParams,
        );
        if (createdAt === undefined) return { data: [], hasMore: false };
        // Row values compare (created_at, id) lexicographically, which is exactly the listing order.
        conditions.push(newerFirst ? "(created_at, id) < (?, ?)" : "(created_at, id) > (?, ?)");
        params.push(createdAt as string, cursor);
      }
      const direction = newerFirst ? "DESC" : "ASC";
      params.push(page.limit + 1);
      const rows = statement(
        `SELECT doc FROM "${collection}"${clause(conditions)} ORDER BY created_at ${direction}, id ${direction} LIMIT ?`,
      ).all(...params);
      const hasMore = rows.length > page.limit;
      if (hasMore) rows.pop();
      if (!newerFirst) rows.reverse();
      return { data: rows.map(parse), hasMore };
    },

    update(collection, id, changes, expect) {
      assertCollection(names, collection);
      return db.inTransaction
        ? updateRow(collection, id, changes, expect)
        : updateInOwnTransaction.immediate(collection, id, changes, expect);
    },

    delete(collection, id, expect) {
      assertCollection(names, collection);
      const params: Param[] = [id];
      const conditions = ["id = ?", ...whereSql(expect, params)];
      return statement(`DELETE FROM "${collection}"${clause(conditions)}`).run(...params).changes > 0;
    },

    deleteMany(collection, where) {
      assertCollection(names, collection);
      const params: Param[] = [];
      const conditions = whereSql(where, params);
      return statement(`DELETE FROM "${collection}"${clause(conditions)}`).run(...params).changes;
    },
  };

  const mutex = new Mutex();
  const guard = txGuard(options.guard ?? true);

  /** Runs a synchronous operation once no transaction holds the connection. */
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

  /** The port's async operations over the sync ones, each run through `run`. */
  function asyncOps(run: <T>(op: () => T) => Promise<T>): StoreOps<Loose> {
    return {
      insert: (collection, doc) => run(() => sync.insert(collection, doc)),
      get: (collection, id) => run(() => sync.get(collection, id)),
      findOne: (collection, where) => run(() => sync.findOne(collection, where)),
      findAll: (collection, where, limit, order) => run(() => sync.findAll(collection, where, limit, order)),
      list: (collection, where, page) => run(() => sync.list(collection, where, page)),
      update: (collection, id, changes, expect) => run(() => sync.update(collection, id, changes, expect)),
      delete: (collection, id, expect) => run(() => sync.delete(collection, id, expect)),
      deleteMany: (collection, where) => run(() => sync.deleteMany(collection, where)),
    };
  }

  const begin = statement("BEGIN IMMEDIATE");
  const commit = statement("COMMIT");
  const rollback = statement("ROLLBACK");
  const probe = statement("SELECT 1");

  const store: Store<Loose> & StoreReadiness & SqliteDiagnostics = {
    kind: "sqlite",
    ...asyncOps(outside),

    explain(collection, where, limit, order) {
      const { sql, params } = selectSql(collection, where, limit, order);
      return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((row) => row.detail);
    },

    async transaction(fn) {
      guard.assertOutside();
      await mutex.acquire();
      const run = new TxRun();
      // The lock is ours until the finally below, so tx operations run directly (and synchronously:
      // an operation fn does not await has still run before fn's next line).
      const tx: TxOps<Loose> = {
        ...asyncOps((op) => run.track(op)),
        afterCommit: (callback) => run.afterCommit(callback),
      };
      let result: Awaited<ReturnType<typeof fn>>;
      try {
        begin.run();
        result = await guard.run(run, () => run.settle(() => fn(tx)));
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
      // Through the lock like any operation: a transaction that holds the connection for long makes
      // readiness wait (and the caller's bound answer), as it makes every request wait.
      await outside(() => probe.get());
    },

    async scrub() {
      if (memory) return;
      await outside(() => db.pragma("wal_checkpoint(TRUNCATE)"));
    },

    async close() {
      guard.assertOutside();
      await mutex.acquire();
      try {
        statements.clear();
        db.close();
      } finally {
        mutex.release();
      }
    },
  };
  // The operations only depend on each collection's documents being BaseDocs, which Docs guarantees.
  return store as unknown as Store<Docs> & StoreReadiness & SqliteDiagnostics;
}
