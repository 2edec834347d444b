// Opening the SQLite file: who may read it, WAL mode, and telling a busy file from any other failure.

import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";

/** How long a write waits for another connection (another process on the file) to finish its own. */
export const BUSY_TIMEOUT_MS = 5000;
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
