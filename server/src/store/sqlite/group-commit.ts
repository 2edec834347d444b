// Group commit on a SQLite file (sqlite.ts uses it for every write outside memory).

import Database from "better-sqlite3";
import type { Mutex, txGuard } from "../common.ts";
import { StoreBusyError } from "../port.ts";
import { registerDocJson } from "./compact.ts";
import { busy, STEP_ASIDE_MS, type WriterTurns } from "./file.ts";

/** The reader connection's page cache, in KiB. */
const READER_CACHE_KB = 4096;

/**
 * The connection reads outside a transaction go through (`read` below), opened once the writer has
 * made the file and its schema. In WAL mode each of its statements sees the last commit, never the
 * writer's open group. It only reads (query_only), and it waits for nothing: SQLite's busy_timeout
 * would sleep on the event loop's thread (better-sqlite3 is synchronous), and a read in WAL mode is
 * refused only while another connection recovers the log, which `read` reports as StoreBusyError.
 */
export function openReader(path: string): Database.Database {
  const reader = new Database(path, { timeout: 0 });
  reader.pragma("query_only = ON");
  // Its own page cache, smaller than the writer's 16 MB (better-sqlite3's default): each connection's
  // cache is resident memory of the process (docs/operating.md "Start-up and memory"), and what the
  // reader misses there is in the operating system's file cache, which is not.
  reader.pragma(`cache_size = -${READER_CACHE_KB}`);
  // The same SQL functions as the writer's: a filter may read a stored document through docJson.
  registerDocJson(reader);
  return reader;
}

/** The writer's statements a group needs. */
export interface GroupStatements {
  begin: Database.Statement;
  commit: Database.Statement;
  rollback: Database.Statement;
  savepoint: Database.Statement;
  releaseSavepoint: Database.Statement;
  rollbackToSavepoint: Database.Statement;
}

export function createGroupCommit(
  db: Database.Database,
  { begin, commit, rollback, savepoint, releaseSavepoint, rollbackToSavepoint }: GroupStatements,
  mutex: Mutex,
  guard: ReturnType<typeof txGuard>,
  /** Turn-taking with the other connections on the file (file.ts, writerTurns). */
  turns: WriterTurns,
  /** How long a write waits for another connection to leave the write lock free before StoreBusyError. */
  busyTimeoutMs: number,
) {
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

  /** Until when this connection leaves the write lock free for another that waits for it (writerTurns). */
  let stepAsideUntil = 0;

  /**
   * With the mutex held: opens the outer transaction unless one is open, waiting while another connection
   * writes. BEGIN IMMEDIATE takes the write lock at once: a transaction that began as a reader and wrote
   * later could not wait for it (SQLITE_BUSY_SNAPSHOT once another connection has committed meanwhile).
   * SQLite's busy_timeout is 0 on this connection, so the wait is here, asleep between tries, without
   * blocking the event loop; past busyTimeoutMs the write fails with StoreBusyError (503, never a 500).
   */
  async function lockForWriting(): Promise<Group> {
    if (group) return group;
    const pause = stepAsideUntil - Date.now();
    stepAsideUntil = 0;
    if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
    const deadline = Date.now() + busyTimeoutMs;
    for (;;) {
      try {
        begin.run();
        break;
      } catch (error) {
        if (!busy(error)) throw error;
        if (Date.now() > deadline) throw new StoreBusyError({ cause: error });
        turns.waiting();
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
    // Another connection waited for the lock meanwhile: the next group lets it go first (writerTurns).
    if (turns.othersWaiting()) stepAsideUntil = Date.now() + STEP_ASIDE_MS;
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
      // Without a turn of the event loop where nothing waits: a group already open is joined at once,
      // and a single operation's synchronous result is taken as it is. Each await is a promise and a
      // suspended function made per write (issue 36, allocation per charge); the mutex is held either way.
      joined = group ?? (await lockForWriting());
      savepoint.run();
      try {
        const done = work();
        result = done instanceof Promise ? await done : done;
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
   * A read outside a transaction, on the reader's connection (openReader): it sees committed data only,
   * and at once. It does not wait for an open group: the group's writes are told to no caller before
   * its commit, so a read that does not see them is one ordered before them, and a caller's own write
   * has committed before the caller hears of it (unit), so its next read sees it (read-your-writes).
   * Waiting for the group made every read queue behind its commit and fsync (issue 36, the stalls).
   */
  async function read<T>(op: () => T): Promise<T> {
    guard.assertOutside();
    try {
      return op();
    } catch (error) {
      // A read in WAL mode is hardly ever refused, but when it is (another connection recovering the
      // log), it is the same outage to the caller as a write that could not get the lock.
      if (busy(error)) throw new StoreBusyError({ cause: error });
      throw error;
    }
  }

  return { unit, read, write, commitGroup };
}
