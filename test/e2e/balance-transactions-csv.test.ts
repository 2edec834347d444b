import { describe, expect, it } from "vitest";
import { createMerchant, useServer } from "./fixtures.ts";

// The CSV export of listBalanceTransactions (`Accept: text/csv`, BalanceTransactionCsv): a merchant with
// 100,000 balance transactions downloads in full, header first, newest first, while the process's memory
// stays bounded: the server reads the store a page at a time and writes as the client reads. The rows are
// inserted straight through the store to keep the setup fast (what a year of a busy merchant leaves).

const ROWS = 100_000;
const HEADER = "id,type,amount,fee,net,currency,status,available_on,source,cashout_id,merchant_id,created_at";
/** Bound on the peak RSS growth while downloading: the whole CSV is ~20 MB as text, far more as objects. */
const MAX_GROWTH_MB = 48;

describe("balance transactions as CSV", () => {
  const { server, client } = useServer();

  it(`streams ${ROWS.toLocaleString("en")} rows with bounded memory`, { timeout: 300_000 }, async () => {
    const merchant = await createMerchant(client);
    const other = await createMerchant(client);
    const base = Date.parse("2026-01-01T00:00:00Z");
    // In transactions of 2,000 rows: one of 100,000 would hold the event loop for seconds, and the HTTP
    // client's idle keep-alive connection would be found closed under it.
    for (let from = 0; from < ROWS + 10; from += 2_000) {
      await server.running.store.transaction(async (tx) => {
        for (let i = from; i < Math.min(from + 2_000, ROWS + 10); i++) {
          const at = `${new Date(base + i * 1000).toISOString().slice(0, -1)}000Z`;
          const mine = i < ROWS;
          await tx.insert("balance_transactions", {
            id: `txn_${String(i).padStart(24, "0")}`,
            livemode: false,
            created_at: at,
            merchant_id: mine ? merchant.id : other.id,
            type: "charge",
            currency: "USD",
            amount: 1000 + (i % 97),
            fee: 59,
            net: 941 + (i % 97),
            status: "available",
            available_on: at,
            source_id: `tx_${String(i).padStart(24, "0")}`,
            cashout_id: null,
            reconcile_at: null,
          });
        }
      });
    }
    global.gc?.();
    const baseline = process.memoryUsage().rss;
    let peak = baseline;

    // A fresh connection (plain fetch): the CSV is not JSON for the client's response validation anyway.
    const response = await fetch(`${server.url}/v1/balance_transactions?merchant_id=${merchant.id}`, {
      headers: { Authorization: `Bearer ${server.sandboxKey}`, Accept: "text/csv" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/csv/);
    // Read it as a client would, keeping only counts: lines, the first line, the first and last row.
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let lines = 0;
    let rest = "";
    let header = "";
    let first = "";
    let last = "";
    let net = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const text = rest + decoder.decode(value, { stream: true });
      const parts = text.split("\r\n");
      rest = parts.pop() ?? "";
      for (const line of parts) {
        if (lines === 0) header = line;
        else {
          if (lines === 1) first = line;
          last = line;
          net += Number(line.split(",")[4]);
        }
        lines++;
      }
      peak = Math.max(peak, process.memoryUsage().rss);
    }
    expect(rest).toBe("");
    expect(header).toBe(HEADER);
    expect(lines - 1).toBe(ROWS);
    // Newest first: the last inserted of this merchant's, then down to the first; the other merchant's excluded.
    expect(first.split(",")[0]).toBe(`txn_${String(ROWS - 1).padStart(24, "0")}`);
    expect(last.split(",")[0]).toBe(`txn_${"0".padStart(24, "0")}`);
    let expected = 0;
    for (let i = 0; i < ROWS; i++) expected += 941 + (i % 97);
    expect(net).toBe(expected);

    const growthMb = (peak - baseline) / 2 ** 20;
    console.log(
      `CSV of ${ROWS} rows: peak RSS ${(peak / 2 ** 20).toFixed(0)} MB, growth ${growthMb.toFixed(1)} MB over ${(baseline / 2 ** 20).toFixed(0)} MB`,
    );
    expect(growthMb).toBeLessThan(MAX_GROWTH_MB);
  });

  it("keeps the filters, and JSON stays the default", async () => {
    const merchant = await createMerchant(client);
    const text = await (
      await fetch(`${server.url}/v1/balance_transactions?merchant_id=${merchant.id}`, {
        headers: { Authorization: `Bearer ${server.sandboxKey}`, Accept: "text/csv" },
      })
    ).text();
    expect(text).toBe(`${HEADER}\r\n`);
    const json = await client.GET("/v1/balance_transactions", { params: { query: { merchant_id: merchant.id } } });
    expect(json.data).toEqual({ object: "list", data: [], has_more: false });
  });
});
