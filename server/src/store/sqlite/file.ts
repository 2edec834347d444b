// Opening the SQLite file: who may read it, WAL mode, and telling a busy file from any other failure.

import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync, utimesSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";

/** How long a write waits for another connection (another process on the file) to finish its own. */
export const BUSY_TIMEOUT_MS = 5000;
/**
 * How recent another connection's announcement that it waits for the write lock must be for a writer
 * to step aside (writerTurns, below): a waiter announces itself at every try, about once a millisecond.
 */
const WAITING_FRESH_MS = 50;
/** How long a writer that saw another connection waiting leaves the write lock free before taking it again. */
export const STEP_ASIDE_MS = 5;
/** How long scrub() tries to truncate the write-ahead log while other connections keep it busy. */
export const SCRUB_TIMEOUT_MS = 10_000;

/** Whether SQLite refused an operation because another connection holds the file (SQLITE_BUSY and its extended codes). */
export function busy(error: unknown): boolean {
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
export function ownerOnly(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  if (!existsSync(path)) closeSync(openSync(path, "a", 0o600));
  if (process.platform === "win32") return;
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    const mode = statSync(file, { throwIfNoEntry: false })?.mode;
    if (mode !== undefined && (mode & 0o077) !== 0) chmodSync(file, mode & 0o700);
  }
}

/** Turn-taking for the write lock between the connections (processes) on one file (writerTurns). */
export interface WriterTurns {
  /** After a try to begin writing found the file busy: tells the other connections that this one waits. */
  waiting(): void;
  /** Whether another connection has announced, just now, that it waits for the write lock. */
  othersWaiting(): boolean;
}

/**
 * SQLite's write lock is not fair: a connection that waits for it tries again every millisecond or so
 * (SQLite's own busy handler does the same, asleep), and takes it only if it happens to be free at that
 * moment. A busy instance group-commits (group-commit.ts) and so holds the lock from its first write of
 * an event-loop turn to the end of that turn, then takes it again within microseconds: another instance
 * on the same file under load could miss every free moment for seconds, and one of its writes then gave
 * up with SQLITE_BUSY (issue 36: a 500 "database is locked" with two instances at 300 events,
 * test/crash/webhooks-two-instances.test.ts). So a waiter announces itself by touching a marker file
 * beside the database (`<file>-waiting`; its modification time is the announcement), and a writer that
 * finds a fresh announcement when it commits leaves the lock free for STEP_ASIDE_MS before taking it
 * again: the waiter's next try gets it. One stat per commit when nobody waits.
 */
export function writerTurns(path: string): WriterTurns {
  const marker = `${path}-waiting`;
  /** This connection's last announcement (ms, with a random fraction), so it never takes its own for another's. */
  let mine = 0;
  return {
    waiting() {
      mine = Date.now() + 0.1 + Math.random() * 0.8;
      try {
        utimesSync(marker, mine / 1000, mine / 1000);
      } catch {
        closeSync(openSync(marker, "a", 0o600));
        utimesSync(marker, mine / 1000, mine / 1000);
      }
    },
    othersWaiting() {
      const at = statSync(marker, { throwIfNoEntry: false })?.mtimeMs;
      return at !== undefined && Math.abs(at - mine) > 0.01 && Date.now() - at < WAITING_FRESH_MS;
    },
  };
}
