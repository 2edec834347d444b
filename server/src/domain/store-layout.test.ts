import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { openSqliteStore } from "../store/sqlite.ts";
import { COLLECTIONS, type Docs } from "./areas.ts";
import type { LedgerEntryDoc } from "./ledger/records.ts";
import type { RequestLogDoc } from "./request-log/records.ts";

// Issue 36 changed indexes of per-charge collections (the ledger entries' upgrade and refund indexes
// made partial, the request log's created_at index dropped, its failures' partial index added), the
// doc column's format (compact.ts, format 2) and created_at's column (an integer, store/sqlite/time.ts):
// a data file the previous layout wrote opens, its documents read back as written, and its tables and
// indexes are what this version declares.

/**
 * The two collections whose layout changed most, as the previous release made them and wrote the
 * documents below into them (its tables, indexes and rows, dumped from a file it wrote): created_at
 * as text, the documents without what their columns hold, kept as text (deflated only from 300).
 */
const PREVIOUS = `
CREATE TABLE "ledger_entries" (id TEXT PRIMARY KEY, livemode INTEGER NOT NULL, created_at TEXT NOT NULL, doc TEXT NOT NULL, "f_merchant_id", "f_currency", "f_bucket", "f_settled", "f_available_on", "f_source_id", "f_posting_id");
CREATE INDEX "ledger_entries__i__livemode__bucket__settled__available_on" ON "ledger_entries" (livemode, "f_bucket", "f_settled", "f_available_on");
CREATE INDEX "ledger_entries__i__merchant_id__currency" ON "ledger_entries" ("f_merchant_id", "f_currency");
CREATE INDEX "ledger_entries__i__posting_id__created_at" ON "ledger_entries" ("f_posting_id", created_at);
CREATE INDEX "ledger_entries__i__source_id" ON "ledger_entries" ("f_source_id");
INSERT INTO "ledger_entries" VALUES ('le_1', 0, '2026-11-28T11:07:05.002002Z', '{"account":"merchant:mch_1:pending","amount":1000,"type":"capture","settled":false,"drawn":0}', 'mch_1', 'USD', 'pending', 0, '2026-11-30T00:00:00.000000Z', 'tx_1', 'txn_1');
CREATE TABLE "request_log" (id TEXT PRIMARY KEY, livemode INTEGER NOT NULL, created_at TEXT NOT NULL, doc TEXT NOT NULL, "f_key_id");
CREATE INDEX "request_log__i__created_at" ON "request_log" (created_at);
CREATE INDEX "request_log__i__livemode__key_id__created_at__id" ON "request_log" (livemode, "f_key_id", created_at, id);
CREATE INDEX "request_log__list" ON "request_log" (livemode, created_at, id);
INSERT INTO "request_log" VALUES ('req_1', 0, '2026-11-28T11:07:05.002002Z', '{"request_id":"req_1","method":"POST","path":"/v1/charges","status":402,"latency_ms":3.25,"key_prefix":"key_test_n9jM","source":"api"}', 'kid_1');
`;

const T = "2026-11-28T11:07:05.002002Z";
const entry: LedgerEntryDoc = {
  id: "le_1",
  livemode: false,
  created_at: T,
  posting_id: "txn_1",
  account: "merchant:mch_1:pending",
  merchant_id: "mch_1",
  currency: "USD",
  bucket: "pending",
  amount: 1000,
  type: "capture",
  source_id: "tx_1",
  available_on: "2026-11-30T00:00:00.000000Z",
  settled: false,
  drawn: 0,
};
const request: RequestLogDoc = {
  id: "req_1",
  livemode: false,
  created_at: T,
  request_id: "req_1",
  method: "POST",
  path: "/v1/charges",
  status: 402,
  latency_ms: 3.25,
  key_prefix: "key_test_n9jM",
  key_id: "kid_1",
  source: "api",
};

describe("a data file of the previous layout", () => {
  const dir = mkdtempSync(join(tmpdir(), "store-layout-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("opens, reads its documents back and carries this version's indexes", async () => {
    const path = join(dir, "store.db");
    const previous = new Database(path);
    previous.exec(PREVIOUS);
    previous.close();

    const store = openSqliteStore<Docs>({ path, collections: COLLECTIONS });
    expect(await store.get("ledger_entries", "le_1")).toEqual(entry);
    expect(await store.get("request_log", "req_1")).toEqual(request);
    // The refund's query finds the pending credit, and the failures' list the failed request.
    expect(
      await store.findOne("ledger_entries", { source_id: "tx_1", type: "capture", bucket: "pending", settled: false }),
    ).toEqual(entry);
    const failed = await store.list("request_log", { livemode: false, status: { $gte: 400 } }, { limit: 10 });
    expect(failed.data).toEqual([request]);
    // Listed by a created range and from a cursor, now over integers.
    const range = { livemode: false, created_at: { $gte: T, $lt: "2026-11-28T11:07:05.002003Z" } };
    expect(await store.findAll("request_log", range)).toEqual([request]);
    expect((await store.list("request_log", { livemode: false }, { limit: 1, endingBefore: "req_1" })).data).toEqual(
      [],
    );
    // Written again in this version's layout, and still the same document.
    await store.update("ledger_entries", "le_1", { set: { drawn: 100 } });
    expect(await store.get("ledger_entries", "le_1")).toEqual({ ...entry, drawn: 100 });
    await store.close();

    const db = new Database(path, { readonly: true });
    const indexes = (table: string) =>
      db
        .prepare<[string], { name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY name",
        )
        .all(table)
        .map((r) => r.name);
    expect(indexes("ledger_entries")).toEqual([
      "ledger_entries__i__created_at__id",
      "ledger_entries__i__livemode__bucket__settled__available_on",
      "ledger_entries__i__merchant_id__currency",
      "ledger_entries__i__source_id",
      "ledger_entries__i__source_id__type",
    ]);
    const createdAt = (table: string) => db.prepare(`SELECT DISTINCT typeof(created_at) FROM "${table}"`).pluck().all();
    expect(createdAt("ledger_entries")).toEqual(["integer"]);
    expect(createdAt("request_log")).toEqual(["integer"]);
    expect(indexes("request_log")).toEqual([
      "request_log__i__livemode__created_at__id",
      "request_log__i__livemode__key_id__created_at__id",
      "request_log__i__livemode__method__created_at__id",
      "request_log__list",
    ]);
    db.close();
  });
});
