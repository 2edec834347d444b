import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { TEST_COLLECTIONS } from "./conformance.ts";
import { StoreBusyError } from "./port.ts";
import { openSqliteStore, useWal } from "./sqlite.ts";

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

// Two connections on one file, as two instances (processes) have: each store here has its own connection,
// mutex and group commit, exactly as a second process would (issue 36: SQLITE_BUSY reached a caller as a 500).
describe("two connections on one file", () => {
  const entry = (id: string) => ({
    id,
    livemode: false,
    created_at: "2026-11-28T00:00:00.000Z",
    account_id: "acc_1",
    amount: 1,
  });

  function withFile(run: (path: string) => Promise<void>) {
    return async () => {
      const dir = mkdtempSync(join(tmpdir(), "two-connections-"));
      try {
        await run(join(dir, "store.db"));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    };
  }

  it(
    "a writer waiting for the lock gets it while the other writes without pause",
    withFile(async (path) => {
      const busy = openSqliteStore({ path, collections: TEST_COLLECTIONS });
      // Two seconds: long enough for any fair turn, and a hog that never leaves the lock free fails the test.
      const waiter = openSqliteStore({ path, collections: TEST_COLLECTIONS, busyTimeoutMs: 2000 });
      let stop = false;
      let written = 0;
      // Four callers that always have a write queued: the busy store takes the lock again within
      // microseconds of each commit, so the waiter never finds it free unless the busy one steps aside.
      const hog = Promise.all(
        [1, 2, 3, 4].map(async (caller) => {
          while (!stop) await busy.insert("entries", entry(`busy_${caller}_${written++}`));
        }),
      );
      try {
        while (written < 20) await new Promise((resolve) => setImmediate(resolve));
        await waiter.insert("entries", entry("waiter_1"));
        await waiter.transaction((tx) => tx.insert("entries", entry("waiter_2")));
        const countBefore = written;
        // The busy store went on afterwards: stepping aside is a pause, not a stop.
        while (written < countBefore + 20) await new Promise((resolve) => setImmediate(resolve));
      } finally {
        stop = true;
        await hog;
      }
      expect(await busy.get("entries", "waiter_2")).toMatchObject({ id: "waiter_2" });
      await waiter.close();
      await busy.close();
    }),
  );

  it(
    "a write that cannot get the lock in time fails with StoreBusyError, and nothing of it is written",
    withFile(async (path) => {
      const store = openSqliteStore({ path, collections: TEST_COLLECTIONS, busyTimeoutMs: 50 });
      const other = new Database(path);
      other.exec("BEGIN IMMEDIATE");
      try {
        await expect(store.insert("entries", entry("refused"))).rejects.toBeInstanceOf(StoreBusyError);
      } finally {
        other.exec("COMMIT");
        other.close();
      }
      expect(await store.get("entries", "refused")).toBeNull();
      // Once the other connection is done, writing works again.
      await store.insert("entries", entry("accepted"));
      expect(await store.get("entries", "accepted")).toMatchObject({ id: "accepted" });
      await store.close();
    }),
  );

  it(
    "a read while a group is open answers at once with what is committed; the writer's caller then reads its write",
    withFile(async (path) => {
      const store = openSqliteStore({ path, collections: TEST_COLLECTIONS });
      try {
        await store.insert("entries", entry("e_1"));
        // The insert has run into an open group (a savepoint in the writer's transaction) and waits for
        // the group's commit, which comes on a later turn of the event loop (setImmediate).
        let written = false;
        const write = store.insert("entries", entry("e_2")).then(() => {
          written = true;
        });
        // Microtasks only, so the insert runs into the group while the group's commit (setImmediate) cannot come yet.
        for (let turn = 0; turn < 20; turn++) await Promise.resolve();
        const during = await store.findAll("entries", {});
        // Read on the reader's connection: the committed e_1 only, and before the group committed
        // (it used to wait for that commit and its fsync: issue 36).
        expect(written).toBe(false);
        expect(during.map((doc) => doc.id)).toEqual(["e_1"]);
        await write;
        expect(await store.get("entries", "e_2")).toMatchObject({ id: "e_2" });
      } finally {
        await store.close();
      }
    }),
  );
});
