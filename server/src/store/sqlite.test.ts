import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { useWal } from "./sqlite.ts";

/** A connection whose journal_mode pragma answers as `answers` say, in turn (the last one repeats). */
function connection(answers: (string | Error)[]) {
  const calls: string[] = [];
  return {
    calls,
    pragma(source: string, options?: { simple?: boolean }) {
      calls.push(source);
      expect(options).toEqual({ simple: true });
      const answer = answers[Math.min(calls.length, answers.length) - 1];
      if (answer instanceof Error) throw answer;
      return answer;
    },
  } as Pick<Database.Database, "pragma"> & { calls: string[] };
}

const locked = () => new Database.SqliteError("database is locked", "SQLITE_BUSY");

// The switch to WAL is where two processes opening one new file meet, and SQLite answers SQLITE_BUSY
// there without waiting out busy_timeout (test/ops/startup.test.ts, "two instances start together").
describe("useWal", () => {
  it("tries again while another connection keeps the file busy, until the switch is made", () => {
    const db = connection([locked(), locked(), "delete", "wal"]);
    useWal(db, 5000);
    expect(db.calls).toEqual(Array(4).fill("journal_mode = WAL"));
  });

  it("gives up with SQLITE_BUSY once its time is over", () => {
    const db = connection([locked()]);
    expect(() => useWal(db, 30)).toThrow(expect.objectContaining({ code: "SQLITE_BUSY" }));
    expect(db.calls.length).toBeGreaterThan(1);
  });

  it("does not retry any other failure", () => {
    const db = connection([new Database.SqliteError("disk I/O error", "SQLITE_IOERR"), "wal"]);
    expect(() => useWal(db, 5000)).toThrow("disk I/O error");
    expect(db.calls).toHaveLength(1);
  });

  it("leaves a real file in WAL mode", () => {
    const dir = mkdtempSync(join(tmpdir(), "use-wal-"));
    try {
      const db = new Database(join(dir, "store.db"));
      useWal(db);
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
