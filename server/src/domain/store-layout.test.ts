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
// made partial, the request log's created_at index dropped, its failures' partial index added) and the
// doc column's format (compact.ts, format 2): a data file the previous layout wrote opens, its
// documents read back as written, and its indexes are what this version declares.

/** The previous release's indexes of the two collections whose layout changed most. */
const PREVIOUS = {
  ...COLLECTIONS,
  ledger_entries: {
    indexes: [
      { fields: ["merchant_id", "currency"] },
      { fields: ["livemode", "bucket", "settled", "available_on"] },
      { fields: ["source_id"] },
      { fields: ["posting_id", "created_at"] },
    ],
    unlisted: true,
  },
  request_log: {
    indexes: [{ fields: ["created_at"] }, { fields: ["livemode", "key_id", "created_at", "id"] }],
  },
} satisfies typeof COLLECTIONS;

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
    // The previous layout: its indexes, and documents kept as text (format 1 deflated only from 300).
    const previous = openSqliteStore<Docs>({ path, collections: PREVIOUS, deflateFrom: 300 });
    await previous.insert("ledger_entries", entry);
    await previous.insert("request_log", request);
    await previous.close();

    const store = openSqliteStore<Docs>({ path, collections: COLLECTIONS });
    expect(await store.get("ledger_entries", "le_1")).toEqual(entry);
    expect(await store.get("request_log", "req_1")).toEqual(request);
    // The refund's query finds the pending credit, and the failures' list the failed request.
    expect(
      await store.findOne("ledger_entries", { source_id: "tx_1", type: "capture", bucket: "pending", settled: false }),
    ).toEqual(entry);
    const failed = await store.list("request_log", { livemode: false, status: { $gte: 400 } }, { limit: 10 });
    expect(failed.data).toEqual([request]);
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
    expect(indexes("request_log")).toEqual([
      "request_log__i__livemode__created_at__id",
      "request_log__i__livemode__key_id__created_at__id",
      "request_log__i__livemode__method__created_at__id",
      "request_log__list",
    ]);
    db.close();
  });
});
