// The embedded adapter (the default, so `npm start` works on a fresh machine): one better-sqlite3 connection,
// one table per collection holding the JSON document plus, as real columns, the fields every query
// orders or partitions by (id, livemode, created_at) and every field an index names (the hot fields).
// What has a column is kept there only, not in the document too; a read puts the document back
// together (sqlite/schema.ts, encode and decode). Indexes and conditions read the columns instead of
// parsing the document (json_extract), and an update rewrites only the indexes of the fields it changed.
//
// better-sqlite3 is synchronous and the port is async. On a file, writes are group-committed
// (sqlite/group-commit.ts): every transaction and every single write is a savepoint in one outer
// transaction that commits once per turn of the event loop, and its caller hears of it only after that
// commit; a read outside a transaction waits for that commit, so it sees committed data only. An async
// mutex lets one unit at a time use the writer, so none can interleave with, or observe half of,
// another. In memory (tests, the benchmark's in-process rows) there is one connection: a transaction
// holds the mutex from BEGIN IMMEDIATE to COMMIT, and operations outside one run synchronously when it
// is free.
//
// The rest lives in sqlite/: schema.ts (the layout, its creation and upgrade), query.ts (conditions
// as SQL), operations.ts (the operations on one connection), group-commit.ts, file.ts (opening the
// file: permissions, WAL) and checkpointer.ts with its thread, checkpointer-worker.mjs.

import Database from "better-sqlite3";
import { assertCollection, collectionNames, Mutex, TxRun, txGuard } from "./common.ts";
import {
  type BaseDoc,
  type CollectionSpec,
  type CollectionSpecs,
  DuplicateKeyError,
  type Order,
  type Page,
  refuseUnlisted,
  type Store,
  type StoreOps,
  type StoreReadiness,
  type TxOps,
  type Where,
} from "./port.ts";
import { startCheckpointer, WAL_AUTOCHECKPOINT_PAGES } from "./sqlite/checkpointer.ts";
import { registerDocJson } from "./sqlite/compact.ts";
import { BUSY_TIMEOUT_MS, busy, ownerOnly, SCRUB_TIMEOUT_MS, useWal, writerTurns } from "./sqlite/file.ts";
import { createGroupCommit, openReader } from "./sqlite/group-commit.ts";
import { connectionOps, type SyncOps } from "./sqlite/operations.ts";
import { listSql, selectSql } from "./sqlite/query.ts";
import { createSchema, layoutOf, type Table } from "./sqlite/schema.ts";

export { useWal } from "./sqlite/file.ts";

type Loose = Record<string, BaseDoc>;

/** What only the SQLite store offers, for tests that check how it runs a query. */
export interface SqliteDiagnostics {
  /** SQLite's query plan (EXPLAIN QUERY PLAN, one line per step) for findAll with these arguments. */
  explain(collection: string, where: Where<BaseDoc>, limit?: number, order?: Order<BaseDoc>): string[];
  /** The same for list with these arguments (one page, newest first or before/after a cursor). */
  explainList(collection: string, where: Where<BaseDoc>, page: Page): string[];
}

/** The writer connection's page cache, in KiB (the reader's is group-commit.ts READER_CACHE_KB). */
const WRITER_CACHE_KB = 4096;

export function openSqliteStore<Docs extends Record<string, BaseDoc>>(options: {
  path: string;
  collections: CollectionSpecs<Docs>;
  /**
   * Refuse the outer store inside its own transaction (common.ts, txGuard). Default on; the server
   * turns it off in production, where it costs every promise a hook.
   */
  guard?: boolean;
  /** How long a write waits for another connection on the file to leave the write lock free (tests shorten it). */
  busyTimeoutMs?: number;
  /**
   * From how many characters of JSON a document is stored deflated (sqlite/compact.ts; default
   * DEFLATE_FROM). Tests set 0 to run every document through the deflated form.
   */
  deflateFrom?: number;
}): Store<Docs> & StoreReadiness & SqliteDiagnostics {
  const names = collectionNames(options.collections);
  const specs = Object.fromEntries(Object.entries<CollectionSpec>(options.collections));
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
    // can roll back alone (sqlite/group-commit.ts): in memory, not in temporary files written for every unit.
    db.pragma("temp_store = MEMORY");
    // The writer's page cache (better-sqlite3's default is 16 MB), resident memory of the process: the
    // pages its writes walk (each index's upper levels) fit in it, and what it misses is in the
    // operating system's file cache. Peak RSS at saturation 188 -> 179 MB (issue 36: 180 MB by default).
    db.pragma(`cache_size = -${WRITER_CACHE_KB}`);
  }

  // Before the schema: its upgrades read documents through it (sqlite/compact.ts).
  registerDocJson(db);
  const { tables } = layoutOf(specs, options.deflateFrom);
  const uniqueFields = memory
    ? createSchema(db, specs, tables)
    : db.transaction(() => createSchema(db, specs, tables)).immediate();

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

  const writer = connectionOps(db, table, duplicateKey);
  // Reads outside a transaction go through a connection of their own (a file only): in WAL mode it
  // sees the last commit at once, while the writer's connection holds the open group's writes, which
  // no caller has been told of yet (sqlite/group-commit.ts, read). On the writer they had to wait for
  // that group's commit, fsync included: the reads queued behind the group commit (issue 36).
  const readerDb = memory ? null : openReader(options.path);
  const reader = readerDb === null ? writer : connectionOps(readerDb, table, duplicateKey);
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
      list: async (collection, where, page) => {
        if (specs[collection]?.unlisted) refuseUnlisted(collection);
        return read(() => reads.list(collection, where, page));
      },
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

  const groups = createGroupCommit(
    db,
    { begin, commit, rollback, savepoint, releaseSavepoint, rollbackToSavepoint },
    mutex,
    guard,
    writerTurns(options.path),
    options.busyTimeoutMs ?? BUSY_TIMEOUT_MS,
  );
  const { unit, read, write, commitGroup } = groups;

  const checkpointer = memory ? null : startCheckpointer(options.path);

  function plan({ sql, params }: { sql: string; params: unknown[] }): string[] {
    return db
      .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
      .all(...params)
      .map((row) => row.detail);
  }

  const store: Store<Loose> & StoreReadiness & SqliteDiagnostics = {
    kind: "sqlite",
    ...(memory ? asyncOps(writer, outside, outside) : asyncOps(reader, read, write)),

    explain(collection, where, limit, order) {
      return plan(selectSql(table(collection), where, limit, order));
    },

    explainList(collection, where, page) {
      const cursor = page.startingAfter ?? page.endingBefore;
      // The plan does not depend on the cursor's value, only on there being one.
      // (A cursor's created_at is its column's integer, sqlite/time.ts.)
      return plan(listSql(table(collection), where, page, cursor === undefined ? undefined : 0));
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
            // cast: better-sqlite3 types a pragma's rows as unknown; wal_checkpoint's are documented (busy, log, checkpointed)
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
        readerDb?.close();
        db.close();
      } finally {
        mutex.release();
      }
    },
  };
  // cast: the operations only depend on each collection's documents being BaseDocs, which Docs guarantees.
  return store as unknown as Store<Docs> & StoreReadiness & SqliteDiagnostics;
}
