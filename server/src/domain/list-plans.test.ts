import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import document from "@payments/contract/openapi.3.1.json" with { type: "json" };
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BaseDoc, Page, Where } from "../store/port.ts";
import { openSqliteStore } from "../store/sqlite.ts";
import { COLLECTIONS, type Docs } from "./areas.ts";
import { FAILED_FROM } from "./request-log/records.ts";

// Issue 36, flat as the data grows: every list and filter an integrator or the console uses reads
// through an index, never a scan of the whole collection. Each case is the condition the list's use case
// builds (cited), tagged with the contract operation and the query parameters it stands for, asked of a
// SQLite store holding a few thousand rows per collection. SQLite's plan for it (EXPLAIN QUERY PLAN):
// - never SCANs the table itself (a SCAN of an index in the listing order is the plan for an unfiltered
//   list, and is fine);
// - for a filtered list, SEARCHes an index on a filtered field (or a partial index made for the filter),
//   and reads the page in the listing order from it: no "USE TEMP B-TREE FOR ORDER BY", which would sort
//   every match of the filter for one page. (Even for a parent's few rows, a charge's refunds: SQLite
//   has no statistics, so unless the index ends in the listing order it walks the environment's listing
//   index instead, checking each row.) The one exception is a filter most rows meet (`walks`): the
//   listing index's walk finds a page at once.
// The operations come from the contract: every operation with a `limit` must have a case for each of its
// filters, so a new list or filter cannot be forgotten.

const ROWS = 3000;
const PAGE: Page = { limit: 10 };
const AFTER: Page = { limit: 10, startingAfter: "x_1" };
const T = "2026-01-01T00:00:00.000000Z";

interface Case {
  name: string;
  /** The contract operation, and the query parameters (its filters) this case stands for. */
  operation: string;
  params: string[];
  collection: keyof Docs & string;
  where: Where<BaseDoc>;
  /** Why walking the listing index is right for this filter (see above): most rows meet it. */
  walks?: string;
}

/** One case: the condition typed by the collection's documents, as the use case builds it. */
function list<C extends keyof Docs & string>(
  operation: string,
  params: string[],
  collection: C,
  where: Where<Docs[C]>,
  walks?: string,
): Case {
  const name = params.length === 0 ? operation : `${operation} by ${params.join(", ")}`;
  // cast: the diagnostics take any collection's condition; this one was checked against its documents above
  const loose = where as Where<BaseDoc>;
  return walks === undefined
    ? { name, operation, params, collection, where: loose }
    : { name, operation, params, collection, where: loose, walks };
}

/** Each list's condition, by operation. */
const LISTS: Case[] = [
  // charges/charges.ts list (listCharges)
  list("listCharges", [], "charges", { livemode: false }),
  list("listCharges", ["merchant_id"], "charges", { livemode: false, merchant_id: "v1" }),
  list("listCharges", ["status"], "charges", { livemode: false, status: "captured" }),
  list("listCharges", ["merchant_id", "status"], "charges", { livemode: false, merchant_id: "v1", status: "refunded" }),
  list("listCharges", ["payment_link_id"], "charges", { livemode: false, payment_link_id: "v1" }),
  // charges/refunds.ts listRefunds
  list("listRefunds", [], "refunds", { livemode: false, charge_id: "v1" }),
  // webhooks/events.ts listEvents, and the event stream's pages
  list("listEvents", [], "events", { livemode: false }),
  list("listEvents", ["type"], "events", { livemode: false, type: "payment.captured" }),
  // request-log/request-log.ts list (listRequestLog: the console's request log)
  list("listRequestLog", [], "request_log", { livemode: false }),
  list("listRequestLog", ["key_id"], "request_log", { livemode: false, key_id: "v1" }),
  list("listRequestLog", ["method"], "request_log", { livemode: false, method: "DELETE" }),
  list("listRequestLog", ["outcome"], "request_log", { livemode: false, status: { $gte: FAILED_FROM } }),
  list(
    "listRequestLog",
    ["outcome"],
    "request_log",
    { livemode: false, status: { $lt: FAILED_FROM } },
    "succeeded: most of the log",
  ),
  list("listRequestLog", ["key_id", "outcome"], "request_log", {
    livemode: false,
    key_id: "v1",
    status: { $gte: FAILED_FROM },
  }),
  // ledger/balance-transactions.ts whereOf (listBalanceTransactions, and its CSV)
  list("listBalanceTransactions", [], "balance_transactions", { livemode: false }),
  list("listBalanceTransactions", ["merchant_id"], "balance_transactions", { livemode: false, merchant_id: "v1" }),
  list("listBalanceTransactions", ["type"], "balance_transactions", { livemode: false, type: "charge" }),
  list("listBalanceTransactions", ["source"], "balance_transactions", { livemode: false, source_id: "v1" }),
  list("listBalanceTransactions", ["cashout_id"], "balance_transactions", { livemode: false, cashout_id: "v1" }),
  list("listBalanceTransactions", ["created_gte", "created_lt"], "balance_transactions", {
    livemode: false,
    created_at: { $gte: T, $lt: "2026-02-01T00:00:00.000000Z" },
  }),
  list("listBalanceTransactions", ["merchant_id", "created_gte"], "balance_transactions", {
    livemode: false,
    merchant_id: "v1",
    created_at: { $gte: T },
  }),
  // payment-links/payment-links.ts list
  list("listPaymentLinks", [], "payment_links", { livemode: false }),
  list("listPaymentLinks", ["merchant_id"], "payment_links", { livemode: false, merchant_id: "v1" }),
  list("listPaymentLinks", ["active"], "payment_links", { livemode: false, active: true }),
  // cashouts/cashouts.ts list
  list("listCashouts", [], "cashouts", { livemode: false }),
  list("listCashouts", ["merchant_id"], "cashouts", { livemode: false, merchant_id: "v1" }),
  list("listCashouts", ["status"], "cashouts", { livemode: false, status: "paid" }),
  // disputes/disputes.ts list
  list("listDisputes", [], "disputes", { livemode: false }),
  list("listDisputes", ["charge_id"], "disputes", { livemode: false, charge_id: "v1" }),
  list("listDisputes", ["merchant_id"], "disputes", { livemode: false, merchant_id: "v1" }),
  list("listDisputes", ["status"], "disputes", { livemode: false, status: "needs_response" }),
  // fraud/evaluations.ts list, fraud/lists.ts
  list("listFraudEvaluations", [], "fraud_evaluations", { livemode: false }),
  list("listFraudEvaluations", ["tx_id"], "fraud_evaluations", { livemode: false, tx_id: "v1" }),
  list("listFraudEvaluations", ["decision"], "fraud_evaluations", { livemode: false, decision: "review" }),
  list("listFraudLists", [], "fraud_lists", { livemode: false }),
  list("listFraudLists", ["kind"], "fraud_lists", { livemode: false, kind: "email" }),
  list("listFraudListItems", [], "fraud_list_items", { livemode: false, list_id: "v1" }),
  // merchants/merchants.ts, service-keys, webhooks endpoints and deliveries, sandboxes
  list("listMerchants", [], "merchants", { livemode: false }),
  list("listMerchants", ["status"], "merchants", { livemode: false, status: "active" }),
  list("listServiceKeys", [], "service_keys", { livemode: false }),
  list("listWebhookEndpoints", [], "webhook_endpoints", { livemode: false }),
  list("listWebhookEndpointDeliveries", [], "webhook_deliveries", { livemode: false, endpoint_id: "v1" }),
  list("listWebhookEndpointDeliveries", ["status"], "webhook_deliveries", {
    livemode: false,
    endpoint_id: "v1",
    status: "failed",
  }),
  list("listEventDeliveries", [], "webhook_deliveries", { livemode: false, event_id: "v1" }),
  list("listEventDeliveries", ["status"], "webhook_deliveries", { livemode: false, event_id: "v1", status: "failed" }),
  list("listSandboxes", [], "sandboxes", { livemode: false }),
];

/** Query parameters that page rather than filter. */
const PAGING = new Set(["limit", "starting_after", "ending_before"]);

/** What this test reads of the contract document: its GET operations' parameters. */
interface Parameter {
  name?: string;
  in?: string;
  $ref?: string;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
}
const contract: {
  paths: Record<
    string,
    { get?: Operation; post?: unknown; patch?: unknown; delete?: unknown; parameters?: Parameter[] }
  >;
  components: { parameters?: Record<string, Parameter> };
} = document;

/** Every list operation of the contract (a GET taking `limit`) → its filters (its other query parameters). */
function contractLists(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const parameters = contract.components.parameters ?? {};
  for (const item of Object.values(contract.paths)) {
    const get = item.get;
    if (get === undefined) continue;
    const names = [...(item.parameters ?? []), ...(get.parameters ?? [])]
      .map((p) => (p.$ref === undefined ? p : parameters[p.$ref.split("/").pop() ?? ""]))
      .filter((p) => p?.in === "query")
      .map((p) => p?.name ?? "");
    if (names.includes("limit"))
      found.set(
        get.operationId,
        names.filter((n) => !PAGING.has(n)),
      );
  }
  return found;
}

describe("every list operation of the contract has a case for each of its filters", () => {
  const lists = contractLists();
  it("finds the contract's lists", () => expect(lists.size).toBeGreaterThan(10));
  it.each([...lists])("%s", (operation, filters) => {
    const cases = LISTS.filter((c) => c.operation === operation);
    expect(cases.length, `${operation} has no case in LISTS`).toBeGreaterThan(0);
    const covered = new Set(cases.flatMap((c) => c.params));
    expect(filters.filter((f) => !covered.has(f))).toEqual([]);
  });
  it("names no operation or filter the contract lacks", () => {
    for (const c of LISTS) expect(lists.get(c.operation), c.name).toEqual(expect.arrayContaining(c.params));
  });
});

/** A plan line that reads the table itself from end to end. */
function fullScans(plan: string[]): string[] {
  return plan.filter((line) => /^SCAN \S+$/.test(line) || /^SCAN \S+ USING (?!.*INDEX)/.test(line));
}

/** The index searches of a plan: the index's name and what it is searched by. */
function searches(plan: string[]): { index: string; by: string }[] {
  return plan.flatMap((line) => {
    const m = /^SEARCH \S+ USING (?:COVERING )?INDEX (\S+) \((.*)\)$/.exec(line);
    return m?.[1] !== undefined && m[2] !== undefined ? [{ index: m[1], by: m[2] }] : [];
  });
}

describe("every list and filter reads through an index", () => {
  const dir = mkdtempSync(join(tmpdir(), "list-plans-"));
  const path = join(dir, "store.db");
  let store: ReturnType<typeof openSqliteStore<Docs>>;

  beforeAll(async () => {
    // The schema as the server makes it, then rows written straight into its tables: a value of each
    // indexed column out of 50, both environments, created_at increasing (a row a unique index refuses is skipped).
    await openSqliteStore<Docs>({ path, collections: COLLECTIONS }).close();
    const db = new Database(path);
    const tables = [...new Set([...LISTS.map((c) => c.collection), "ledger_entries"])];
    db.transaction(() => {
      for (const table of tables) {
        // cast: better-sqlite3 types a pragma's rows as unknown; table_info's are documented (cid, name, type, …)
        const columns = (db.pragma(`table_info("${table}")`) as { name: string }[])
          .map((c) => c.name)
          .filter((c) => c.startsWith("f_"));
        const insert = db.prepare(
          `INSERT OR IGNORE INTO "${table}" (id, livemode, created_at, doc${columns.map((c) => `, "${c}"`).join("")}) VALUES (?, ?, ?, '{}'${columns.map(() => ", ?").join("")})`,
        );
        // Timestamps as the store keeps them: integers of microseconds (store/sqlite/time.ts).
        const specs: Record<string, { timestamps?: string[] }> = COLLECTIONS;
        const spec = specs[table] ?? {};
        const stamps = new Set((spec.timestamps ?? []).map((field) => `f_${field}`));
        for (let i = 0; i < ROWS; i++) {
          const createdAt = (Date.UTC(2026, 0, 1) + i * 60_000) * 1000;
          const values = columns.map((c, k) => (stamps.has(c) ? createdAt + k : `v${(i + k) % 50}`));
          insert.run(`x_${i}`, i % 2, createdAt, ...values);
        }
      }
    })();
    db.close();
    store = openSqliteStore<Docs>({ path, collections: COLLECTIONS });
  });
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("sweeps the request log by age through the listing index (request-log.ts sweep)", () => {
    const plan = store.explain("request_log", { livemode: { $in: [false, true] }, created_at: { $lt: T } });
    expect(plan.join(" | ")).toMatch(
      /^SEARCH request_log USING (COVERING )?INDEX request_log__list \(livemode=\? AND created_at<\?\)/,
    );
  });

  /** A condition on ledger entries, typed by their documents. */
  const entries = (where: Where<Docs["ledger_entries"]>): Where<BaseDoc> =>
    // cast: the diagnostics take any collection's condition; this one was checked against its documents
    where as Where<BaseDoc>;
  it.each([
    // ledger/ledger.ts: a refund's draw on its charge's pending credit
    [
      "a charge's pending credit",
      entries({ source_id: "v1", type: "capture", bucket: "pending", settled: false }),
      "ledger_entries__i__source_id",
    ],
    // ledger/upgrade.ts: entries without a posting, oldest first, and one movement's
    ["entries without a posting", entries({ posting_id: null }), "ledger_entries__i__created_at__id"],
    [
      "a movement's entries without a posting",
      entries({ type: "capture", source_id: "v1", posting_id: null }),
      "ledger_entries__i__source_id__type",
    ],
  ])("finds %s through its partial index", (_name, where, index) => {
    const plan = store.explain("ledger_entries", where, 100, { by: "created_at", direction: "asc" }).join(" | ");
    // A SCAN of a partial index reads only the rows it holds (here: none once upgraded).
    expect(plan).toMatch(new RegExp(`^(SEARCH|SCAN) ledger_entries USING INDEX ${index}\\b`));
  });

  it("leaves out of a sparse index ending in the listing order the rows its field is null in", () => {
    const db = new Database(path, { readonly: true });
    const sql = db
      .prepare<[], { sql: string }>(
        "SELECT sql FROM sqlite_master WHERE name = 'charges__i__livemode__payment_link_id__created_at__id'",
      )
      .get()?.sql;
    db.close();
    expect(sql).toMatch(/WHERE "f_payment_link_id" IS NOT NULL$/);
  });

  it.each(LISTS.map((c) => [c.name, c.collection, c] as const))("%s (%s)", (_name, collection, c) => {
    const filtered = Object.keys(c.where).filter((field) => field !== "livemode");
    for (const page of [PAGE, AFTER]) {
      const plan = store.explainList(collection, c.where, page);
      const shown = plan.join(" | ");
      expect(fullScans(plan), shown).toEqual([]);
      if (filtered.length > 0) {
        // An index searched by a filtered field, or one made for the filter (a partial index).
        const used = searches(plan).filter(
          ({ index, by }) =>
            index !== `${collection}__list` || filtered.some((field) => new RegExp(`\\b(f_)?${field}[=><]`).test(by)),
        );
        if (c.walks === undefined) expect(used, shown).not.toEqual([]);
      }
      expect(shown).not.toMatch(/USE TEMP B-TREE FOR ORDER BY/);
      if (process.env.PLANS) console.log(`PLAN ${c.name} ${page === PAGE ? "" : "after"}: ${shown}`);
    }
  });
});
