// Runs the conformance suite against every adapter available here: SQLite in memory and in a WAL file
// always, MongoDB only when MONGODB_URI points at a replica set (none can run on the build machines).

import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { MongoClient } from "mongodb";
import { afterAll, describe, expect, it } from "vitest";
import { type AccountDoc, describeStoreConformance, TEST_COLLECTIONS, type TestDocs } from "./conformance.ts";
import { openMongoStore } from "./mongodb.ts";
import type { BaseDoc, CollectionSpecs, Where } from "./port.ts";
import { unpack } from "./sqlite/compact.ts";
import { microsOf } from "./sqlite/time.ts";
import { openSqliteStore } from "./sqlite.ts";

describeStoreConformance("sqlite :memory:", async () =>
  openSqliteStore({ path: ":memory:", collections: TEST_COLLECTIONS }),
);

// The same semantics with every document stored deflated (sqlite/compact.ts): the suite's documents
// are shorter than DEFLATE_FROM, so the run above keeps them all as text.
describeStoreConformance("sqlite :memory:, every document deflated", async () =>
  openSqliteStore({ path: ":memory:", collections: TEST_COLLECTIONS, deflateFrom: 0 }),
);

describe("sqlite file", () => {
  const dir = mkdtempSync(join(tmpdir(), "store-conformance-"));
  // A missing parent directory is created on open.
  const path = join(dir, "nested", "store.db");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  describeStoreConformance("sqlite file", async () => openSqliteStore({ path, collections: TEST_COLLECTIONS }));

  it("keeps the data in a write-ahead log and across reopening", async () => {
    const store = openSqliteStore({ path, collections: TEST_COLLECTIONS });
    const doc = {
      id: "acc_persist",
      livemode: true,
      created_at: new Date().toISOString(),
      owner: "o",
      status: "open" as const,
      balance: 1,
      email: "persist@example.com",
      nickname: null,
      vip: false,
      meta: {},
    };
    await store.insert("accounts", doc);
    expect(existsSync(`${path}-wal`)).toBe(true);
    await store.close();
    const reopened = openSqliteStore({ path, collections: TEST_COLLECTIONS });
    expect(await reopened.get("accounts", "acc_persist")).toStrictEqual(doc);
    await reopened.close();
  });
});

/** An account document of the conformance collections, created now (in the stored format: kernel/time.ts). */
function docOf(id: string) {
  return {
    id,
    livemode: false,
    created_at: `${new Date().toISOString().slice(0, -1)}000Z`,
    owner: "o",
    status: "open" as const,
    balance: 1,
    email: `${id}@example.com`,
    nickname: null,
    vip: false,
    meta: {},
  };
}

describe("sqlite file written by an earlier version", () => {
  const dir = mkdtempSync(join(tmpdir(), "store-upgrade-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("gives indexed fields their columns, filled from the documents, and drops the indexes over the documents", async () => {
    const path = join(dir, "old.db");
    // The layout before indexed fields had columns: the document alone, indexes over json_extract.
    const old = new Database(path);
    old.exec(
      'CREATE TABLE "accounts" (id TEXT PRIMARY KEY, livemode INTEGER NOT NULL, created_at TEXT NOT NULL, doc TEXT NOT NULL)',
    );
    old.exec(`CREATE INDEX "accounts__i__livemode__status" ON "accounts" (livemode, json_extract(doc, '$.status'))`);
    old.exec(`CREATE UNIQUE INDEX "accounts__u__email" ON "accounts" (json_extract(doc, '$.email'))`);
    const insert = old.prepare("INSERT INTO accounts (id, livemode, created_at, doc) VALUES (?, ?, ?, ?)");
    // Created_at as text; acc_0's in another form than the stored one (three decimals), an hour earlier.
    const docs = [
      { ...docOf("acc_0"), created_at: new Date(Date.now() - 3_600_000).toISOString() },
      { ...docOf("acc_1"), status: "open" },
      { ...docOf("acc_2"), status: "frozen" },
    ];
    for (const doc of docs) insert.run(doc.id, 0, doc.created_at, JSON.stringify(doc));
    old.close();

    const store = openSqliteStore({ path, collections: TEST_COLLECTIONS });
    expect((await store.findAll("accounts", { status: "frozen" })).map((d) => d.id)).toEqual(["acc_2"]);
    // Its created_at now an integer (sqlite/time.ts): each document reads back as written, in the
    // listing order, and a cursor and a created range find their rows.
    for (const doc of docs) expect(await store.get("accounts", doc.id)).toStrictEqual(doc);
    const page = await store.list("accounts", { livemode: false }, { limit: 2 });
    expect(page.data.map((d) => d.id)).toEqual(["acc_2", "acc_1"]);
    const next = await store.list("accounts", { livemode: false }, { limit: 2, startingAfter: "acc_1" });
    expect(next.data).toStrictEqual([docs[0]]);
    const earlier = await store.findAll("accounts", { created_at: { $lt: docs[1]?.created_at ?? "" } });
    expect(earlier.map((d) => d.id)).toEqual(["acc_0"]);
    await expect(store.insert("accounts", { ...docOf("acc_3"), email: "acc_1@example.com" })).rejects.toMatchObject({
      key: "email",
    });
    await store.close();
    const check = new Database(path, { readonly: true });
    const indexes = check.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL").all();
    check.close();
    expect(indexes).toContainEqual({
      name: "accounts__i__livemode__status",
      sql: 'CREATE INDEX "accounts__i__livemode__status" ON "accounts" (livemode, "f_status")',
    });
    expect(JSON.stringify(indexes)).not.toContain("json_extract");
    const columns = new Database(path, { readonly: true });
    expect(columns.prepare("SELECT DISTINCT typeof(created_at) FROM accounts").pluck().all()).toEqual(["integer"]);
    columns.close();
  });
});

describe("sqlite documents", () => {
  const dir = mkdtempSync(join(tmpdir(), "store-documents-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const stored = (path: string, id: string) => {
    const check = new Database(path, { readonly: true });
    try {
      // Text or deflated (sqlite/compact.ts).
      return JSON.parse(unpack("accounts", check.prepare("SELECT doc FROM accounts WHERE id = ?").pluck().get(id)));
    } finally {
      check.close();
    }
  };

  it("keep out of the document what has a column of its own, and read back whole", async () => {
    const path = join(dir, "layout.db");
    const store = openSqliteStore({ path, collections: TEST_COLLECTIONS });
    const doc = { ...docOf("acc_layout"), limit: 7, closed_at: null };
    await store.insert("accounts", doc);
    expect(await store.get("accounts", "acc_layout")).toStrictEqual(doc);
    await store.update("accounts", "acc_layout", { set: { status: "frozen" }, inc: { balance: 2 } });
    await store.close();
    // The system fields and the indexed strings and numbers (email, status, balance) live in their
    // columns only; an indexed null (closed_at) stays, as do the fields no index names.
    expect(stored(path, "acc_layout")).toStrictEqual({
      owner: "o",
      nickname: null,
      vip: false,
      meta: {},
      limit: 7,
      closed_at: null,
    });
    const reopened = openSqliteStore({ path, collections: TEST_COLLECTIONS });
    expect(await reopened.get("accounts", "acc_layout")).toStrictEqual({ ...doc, status: "frozen", balance: 3 });
    await reopened.close();
  });

  it("read documents the previous layout kept whole, and rewrite them without the copies", async () => {
    const path = join(dir, "previous.db");
    openSqliteStore({ path, collections: TEST_COLLECTIONS }).close();
    // What the version before this layout wrote: the same table and columns, the whole document in doc
    // (created_at as this version's column holds it: the upgrade of the column is tested above).
    const old = new Database(path);
    const doc = docOf("acc_previous");
    old
      .prepare(
        'INSERT INTO accounts (id, livemode, created_at, doc, "f_email", "f_status", "f_balance", "f_closed_at") VALUES (?, 0, ?, ?, ?, ?, ?, NULL)',
      )
      .run(doc.id, microsOf(doc.created_at) ?? null, JSON.stringify(doc), doc.email, doc.status, doc.balance);
    old.close();
    const store = openSqliteStore({ path, collections: TEST_COLLECTIONS });
    expect(await store.get("accounts", "acc_previous")).toStrictEqual(doc);
    expect((await store.findAll("accounts", { status: "open", balance: 1 })).map((d) => d.id)).toEqual([
      "acc_previous",
    ]);
    expect(await store.update("accounts", "acc_previous", { set: { nickname: "n" } })).toStrictEqual({
      ...doc,
      nickname: "n",
    });
    await store.close();
    expect(Object.keys(stored(path, "acc_previous")).sort()).toEqual(["meta", "nickname", "owner", "vip"]);
  });

  // Issue 36, bytes per charge: timestamps as integers of microseconds (sqlite/time.ts).
  it("keep timestamps as integers in their columns, and read them back as written", async () => {
    const path = join(dir, "timestamps.db");
    const store = openSqliteStore({ path, collections: TEST_COLLECTIONS });
    const exact = { ...docOf("acc_exact"), closed_at: "2026-11-28T11:07:05.002002Z" };
    const other = { ...docOf("acc_other"), created_at: "2026-11-28T11:07:05.002Z", closed_at: "2026-11-28T11:07:06Z" };
    await store.insert("accounts", exact);
    await store.insert("accounts", other);
    expect(await store.get("accounts", "acc_exact")).toStrictEqual(exact);
    expect(await store.get("accounts", "acc_other")).toStrictEqual(other);
    const later = { closed_at: { $gt: "2026-11-28T11:07:05.002002Z" } };
    expect((await store.findAll("accounts", later)).map((d) => d.id)).toEqual(["acc_other"]);
    await expect(store.insert("accounts", { ...docOf("acc_bad"), closed_at: "yesterday" })).rejects.toThrow(
      /closed_at must be a timestamp/,
    );
    await expect(store.insert("accounts", { ...docOf("acc_bad"), created_at: "2026" })).rejects.toThrow(
      /created_at must be a timestamp/,
    );
    await store.close();
    const check = new Database(path, { readonly: true });
    const types = check.prepare(
      "SELECT id, typeof(created_at) AS c, typeof(f_closed_at) AS f FROM accounts ORDER BY id",
    );
    expect(types.all()).toEqual([
      { id: "acc_exact", c: "integer", f: "integer" },
      { id: "acc_other", c: "integer", f: "integer" },
    ]);
    check.close();
    // In the stored format a timestamp lives in its column only; in another form its document keeps the text.
    expect(stored(path, "acc_exact")).not.toHaveProperty("closed_at");
    expect(stored(path, "acc_exact")).not.toHaveProperty("created_at");
    expect(stored(path, "acc_other")).toMatchObject({ created_at: other.created_at, closed_at: other.closed_at });
  });

  it("turn a field newly declared a timestamp into integers at open, and back into text when no index names it", async () => {
    const path = join(dir, "declared.db");
    const undeclared = { ...TEST_COLLECTIONS, accounts: { indexes: TEST_COLLECTIONS.accounts.indexes } };
    const doc = { ...docOf("acc_declared"), closed_at: "2026-11-28T11:07:05.002002Z" };
    const before = openSqliteStore({ path, collections: undeclared });
    await before.insert("accounts", doc);
    await before.close();
    const declared = openSqliteStore({ path, collections: TEST_COLLECTIONS });
    expect(await declared.get("accounts", "acc_declared")).toStrictEqual(doc);
    expect(await declared.findAll("accounts", { closed_at: { $gte: doc.closed_at } })).toStrictEqual([doc]);
    await declared.close();
    const check = new Database(path, { readonly: true });
    expect(check.prepare("SELECT typeof(f_closed_at) FROM accounts").pluck().get()).toBe("integer");
    check.close();
    // No index names it any more: the text goes back into the document, and the column goes.
    const unindexed: CollectionSpecs<TestDocs> = {
      ...TEST_COLLECTIONS,
      accounts: { ...TEST_COLLECTIONS.accounts, indexes: TEST_COLLECTIONS.accounts.indexes.slice(0, 3) },
    };
    const after = openSqliteStore({ path, collections: unindexed });
    expect(await after.get("accounts", "acc_declared")).toStrictEqual(doc);
    await after.close();
    expect(stored(path, "acc_declared")).toHaveProperty("closed_at", doc.closed_at);
  });

  // Issue 36, bytes per charge: a long document is stored deflated against its collection's dictionary.
  it("keep a long document deflated, read it back whole, and find it by a field that has no column", async () => {
    const path = join(dir, "deflated.db");
    const store = openSqliteStore({ path, collections: TEST_COLLECTIONS });
    const long = { ...docOf("acc_long"), nickname: "a nickname that makes the document long ".repeat(12) };
    const short = docOf("acc_short");
    await store.insert("accounts", long);
    await store.insert("accounts", short);
    expect(await store.get("accounts", "acc_long")).toStrictEqual(long);
    // A condition on a field the document holds reads it through docJson (query.ts).
    expect((await store.findAll("accounts", { owner: "o", vip: false })).map((d) => d.id).sort()).toEqual([
      "acc_long",
      "acc_short",
    ]);
    expect((await store.findAll("accounts", { nickname: long.nickname })).map((d) => d.id)).toEqual(["acc_long"]);
    await store.close();
    const check = new Database(path, { readonly: true });
    const kinds = check.prepare("SELECT id, typeof(doc) AS kind, length(doc) AS bytes FROM accounts ORDER BY id").all();
    check.close();
    expect(kinds).toEqual([
      { id: "acc_long", kind: "blob", bytes: expect.any(Number) },
      { id: "acc_short", kind: "text", bytes: expect.any(Number) },
    ]);
    // The repeated nickname deflates to a fraction of its JSON.
    expect(kinds[0]).toMatchObject({ bytes: expect.toSatisfy((n: number) => n < long.nickname.length / 4) });
  });

  it.each([
    ["text", undefined],
    ["deflated", 0],
  ])("put a field back into its documents (%s) when no index names it any more", async (_, deflateFrom) => {
    const path = join(dir, `unindexed-${deflateFrom}.db`);
    const store = openSqliteStore({ path, collections: TEST_COLLECTIONS, deflateFrom });
    const doc = docOf("acc_unindexed");
    await store.insert("accounts", doc);
    await store.close();
    expect(stored(path, "acc_unindexed")).not.toHaveProperty("balance");
    const withoutBalance: CollectionSpecs<TestDocs> = {
      ...TEST_COLLECTIONS,
      accounts: { indexes: TEST_COLLECTIONS.accounts.indexes.filter((i) => !i.fields.includes("balance")) },
    };
    const reopened = openSqliteStore({ path, collections: withoutBalance, deflateFrom });
    expect(await reopened.get("accounts", "acc_unindexed")).toStrictEqual(doc);
    expect((await reopened.findAll("accounts", { balance: 1 })).map((d) => d.id)).toEqual(["acc_unindexed"]);
    await reopened.close();
    expect(stored(path, "acc_unindexed")).toHaveProperty("balance", 1);
    const check = new Database(path, { readonly: true });
    const columns = (check.pragma('table_info("accounts")') as { name: string }[]).map((c) => c.name);
    check.close();
    expect(columns).not.toContain("f_balance");
  });
});

describe("sqlite indexes", () => {
  it("leave the documents without a sparse index's last field out of it, and use it for a range on that field", async () => {
    const store = openSqliteStore({ path: ":memory:", collections: TEST_COLLECTIONS });
    const explain = (where: Where<AccountDoc>) => store.explain("accounts", where as Where<BaseDoc>).join(" | ");
    const plan = explain({ status: "closed", closed_at: { $lte: "2024-01-01T00:00:00.000000Z" } });
    expect(plan).toContain("USING INDEX accounts__i__status__closed_at");
    // Without a condition a null cannot meet, the index cannot answer: the query does not use it.
    expect(explain({ status: "closed", closed_at: null })).not.toContain("accounts__i__status__closed_at");
    await store.close();
  });

  // Issue 36, bytes per charge: a queue's index covers only the queue (IndexSpec.where), and a collection
  // nothing lists has no listing index (CollectionSpec.unlisted); a store made before upgrades at open.
  const account = (id: string, vip: boolean) => ({
    id,
    livemode: false,
    created_at: `2026-11-28T00:00:0${id.slice(-1)}.000000Z`,
    owner: "o",
    status: "open" as const,
    balance: 1,
    email: `${id}@example.com`,
    nickname: null,
    vip,
    meta: {},
  });
  const before: CollectionSpecs<TestDocs> = {
    accounts: { indexes: [{ fields: ["vip", "created_at"] }] },
    entries: { indexes: [{ fields: ["account_id"] }] },
  };
  const after: CollectionSpecs<TestDocs> = {
    accounts: { indexes: [{ fields: ["vip", "created_at"], where: { vip: true } }] },
    entries: { indexes: [{ fields: ["account_id"] }], unlisted: true },
  };

  it("index only a queue's documents with `where`, and serve the queue's query from that index", async () => {
    const store = openSqliteStore({ path: ":memory:", collections: after });
    for (const [id, vip] of [
      ["acc_1", true],
      ["acc_2", false],
      ["acc_3", true],
    ] as const)
      await store.insert("accounts", account(id, vip));
    const queue = { by: "created_at", direction: "asc" } as const;
    expect(store.explain("accounts", { vip: true } as Where<BaseDoc>, 10, queue).join(" | ")).toContain(
      "USING INDEX accounts__i__vip__created_at",
    );
    // A query for the documents the index leaves out cannot use it (and still finds them).
    expect(store.explain("accounts", { vip: false } as Where<BaseDoc>, 10, queue).join(" | ")).not.toContain(
      "accounts__i__vip",
    );
    expect((await store.findAll("accounts", { vip: true }, 10, queue)).map((a) => a.id)).toEqual(["acc_1", "acc_3"]);
    expect((await store.findAll("accounts", { vip: false }, 10, queue)).map((a) => a.id)).toEqual(["acc_2"]);
    await store.close();
  });

  it("drop the listing index of an unlisted collection and make an index partial when a store made before opens", async () => {
    const dir = mkdtempSync(join(tmpdir(), "store-upgrade-indexes-"));
    const path = join(dir, "store.db");
    const indexes = () => {
      const db = new Database(path, { readonly: true });
      const rows = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL").all();
      db.close();
      return new Map((rows as { name: string; sql: string }[]).map((r) => [r.name, r.sql]));
    };
    try {
      const old = openSqliteStore({ path, collections: before });
      await old.insert("accounts", account("acc_1", true));
      await old.insert("accounts", account("acc_2", false));
      await old.insert("entries", {
        id: "ent_1",
        livemode: false,
        created_at: "2026-11-28T00:00:00.000000Z",
        account_id: "acc_1",
        amount: 5,
      });
      await old.close();
      expect(indexes().has("entries__list")).toBe(true);
      expect(indexes().get("accounts__i__vip__created_at")).not.toContain("WHERE");

      const upgraded = openSqliteStore({ path, collections: after });
      expect(indexes().has("entries__list")).toBe(false);
      expect(indexes().has("accounts__list")).toBe(true);
      expect(indexes().get("accounts__i__vip__created_at")).toContain("WHERE");
      // The data is all there, and read through what is left.
      expect(await upgraded.findAll("entries", { account_id: "acc_1" })).toHaveLength(1);
      expect((await upgraded.findAll("accounts", { vip: true })).map((a) => a.id)).toEqual(["acc_1"]);
      // list() refuses an unlisted collection rather than scanning it.
      await expect(upgraded.list("entries", { livemode: false }, { limit: 10 })).rejects.toThrow(/unlisted/);
      await upgraded.close();

      // And back: a collection declared listed again gets its listing index again.
      const again = openSqliteStore({ path, collections: before });
      expect(indexes().has("entries__list")).toBe(true);
      expect((await again.list("entries", { livemode: false }, { limit: 10 })).data).toHaveLength(1);
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("sqlite file at rest", () => {
  const dir = mkdtempSync(join(tmpdir(), "store-at-rest-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const account = (id: string, nickname: string) => ({
    id,
    livemode: false,
    // In the stored format, so the document stays short enough to be kept as text (sqlite/compact.ts).
    created_at: `${new Date().toISOString().slice(0, -1)}000Z`,
    owner: "o",
    status: "open" as const,
    balance: 1,
    email: `${id}@example.com`,
    nickname,
    vip: false,
    meta: {},
  });

  it("creates its directory, database and write-ahead log readable by the owner only", async () => {
    const path = join(dir, "private", "store.db");
    const store = openSqliteStore({ path, collections: TEST_COLLECTIONS });
    await store.insert("accounts", account("acc_mode", "x"));
    for (const file of [join(dir, "private"), path, `${path}-wal`]) expect(statSync(file).mode & 0o077).toBe(0);
    await store.close();
  });

  it("narrows a database file an older version left readable by others", async () => {
    const path = join(dir, "old.db");
    writeFileSync(path, "");
    chmodSync(path, 0o644);
    const store = openSqliteStore({ path, collections: TEST_COLLECTIONS });
    expect(statSync(path).mode & 0o077).toBe(0);
    await store.close();
  });

  it("after scrub(), no erased value is left in the database or its write-ahead log", async () => {
    const path = join(dir, "scrub.db");
    const store = openSqliteStore({ path, collections: TEST_COLLECTIONS });
    const secrets = Array.from({ length: 30 }, (_, i) => `erase-me-${randomUUID()}-${i}`);
    for (const [i, secret] of secrets.entries()) await store.insert("accounts", account(`acc_${i}`, secret));
    const files = () => Buffer.concat([path, `${path}-wal`].filter(existsSync).map((f) => readFileSync(f)));
    expect(secrets.every((x) => files().includes(x))).toBe(true);
    for (let i = 0; i < secrets.length; i++) await store.update("accounts", `acc_${i}`, { set: { nickname: null } });
    await store.delete("accounts", "acc_0");
    await store.scrub();
    const left = secrets.filter((x) => files().includes(x));
    expect(left).toEqual([]);
    await store.close();
    expect(secrets.filter((x) => files().includes(x))).toEqual([]);
  });
});

describe("sqlite file shared by several connections", () => {
  const dir = mkdtempSync(join(tmpdir(), "store-contenders-"));
  const path = join(dir, "store.db");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const fixture = fileURLToPath(new URL("./sqlite-contender.fixture.ts", import.meta.url));
  async function contend(attempts: number, start: number): Promise<number> {
    const args = ["--import", "tsx", fixture, path, String(attempts), String(start)];
    const { stdout } = await promisify(execFile)(process.execPath, args);
    return Number(stdout);
  }

  it("never lets two connections both spend the same balance", async () => {
    const store = openSqliteStore({ path, collections: TEST_COLLECTIONS });
    await store.insert("accounts", {
      id: "acc_shared",
      livemode: false,
      created_at: new Date().toISOString(),
      owner: "o",
      status: "open",
      balance: 3000,
      email: "shared@example.com",
      nickname: null,
      vip: false,
      meta: {},
    });
    // Four processes, 4000 debits of 1 against 3000: exactly 3000 may succeed.
    const start = Date.now() + 2000;
    const succeeded = await Promise.all([1, 2, 3, 4].map(() => contend(1000, start)));
    expect(succeeded.reduce((a, b) => a + b, 0)).toBe(3000);
    expect((await store.get("accounts", "acc_shared"))?.balance).toBe(0);
    await store.close();
  }, 60_000);
});

const mongoUri = process.env.MONGODB_URI || undefined;
/** Set where a run must reach MongoDB (the GitHub workflow): then a missing MONGODB_URI fails instead of skipping. */
const mongoRequired = !["", "0", "false"].includes(process.env.REQUIRE_MONGODB ?? "");

if (!mongoUri && !mongoRequired) {
  // Said where it is decided, so a green run on SQLite alone never passes for a run on MongoDB.
  console.info("store conformance on MongoDB skipped: MONGODB_URI is not set (docs/operating.md 'Running on MongoDB')");
}

describe.runIf(mongoRequired && !mongoUri)("mongodb required", () => {
  it("has MONGODB_URI, as REQUIRE_MONGODB asks", () => {
    expect(mongoUri, "REQUIRE_MONGODB is set, so this run must use MongoDB: set MONGODB_URI").toBeDefined();
  });
});

// With MONGODB_URI set, a deployment that cannot be used fails every case here, with the adapter's
// one-line reason (openMongoStore), instead of being skipped.
describe.skipIf(!mongoUri)(mongoUri ? "mongodb" : "mongodb (skipped: MONGODB_URI is not set)", () => {
  const dbName = `store_conformance_${randomUUID().replaceAll("-", "")}`;
  let opened = false;
  afterAll(async () => {
    // Nothing to drop when the deployment could not be used (and asking again would only wait).
    if (!opened) return;
    const client = new MongoClient(mongoUri ?? "");
    try {
      await client.db(dbName).dropDatabase();
    } finally {
      await client.close();
    }
  });

  describeStoreConformance("mongodb", async () => {
    const store = await openMongoStore<TestDocs>({ uri: mongoUri ?? "", dbName, collections: TEST_COLLECTIONS });
    opened = true;
    return store;
  });
});
