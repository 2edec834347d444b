import type { Request } from "express";
import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type AppStore, COLLECTIONS, type Docs } from "../domain/areas.ts";
import type { RequestLogDoc } from "../domain/request-log/records.ts";
import { openSqliteStore } from "../store/sqlite.ts";
import { contractOperations } from "./contract.ts";
import { OTHER_OPERATION, operationResolver, requestLogWriter } from "./observability.ts";

// The request log is written in batches (one transaction per batch): nothing recorded may be lost on
// close, and a batch waits at most flushMs or until maxRows are buffered.

const stores: AppStore[] = [];
function openStore(): AppStore {
  const store = openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
  stores.push(store);
  return store;
}
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

let n = 0;
function row(): RequestLogDoc {
  n++;
  return {
    id: `req_${String(n).padStart(24, "0")}`,
    livemode: false,
    created_at: new Date().toISOString(),
    request_id: `req_${String(n).padStart(24, "0")}`,
    method: "POST",
    path: "/v1/tokens?card=4242********4242",
    status: 200,
    latency_ms: 1.5,
    key_prefix: "key_test_abcd",
  };
}

const silent = pino({ level: "silent" });
const stored = (store: AppStore) => store.findAll("request_log", {});

describe("request log writer", () => {
  it("buffers records and writes them, unchanged, on flush", async () => {
    const store = openStore();
    const writer = requestLogWriter({ store, logger: silent, flushMs: 60_000 });
    const rows = [row(), row(), row()];
    for (const r of rows) writer.record(r);
    expect(await stored(store)).toHaveLength(0);
    await writer.flush();
    const written = await stored(store);
    expect(written).toHaveLength(3);
    expect(written.map((r) => r.id).sort()).toEqual(rows.map((r) => r.id).sort());
    expect(written.find((r) => r.id === rows[0]?.id)).toEqual(rows[0]);
  });

  it("writes a batch after flushMs without being asked", async () => {
    const store = openStore();
    const writer = requestLogWriter({ store, logger: silent, flushMs: 20 });
    writer.record(row());
    writer.record(row());
    await vi.waitFor(async () => expect(await stored(store)).toHaveLength(2), { timeout: 2000, interval: 10 });
    await writer.close();
  });

  it("writes at once when maxRows are buffered", async () => {
    const store = openStore();
    const writer = requestLogWriter({ store, logger: silent, flushMs: 60_000, maxRows: 3 });
    for (let i = 0; i < 7; i++) writer.record(row());
    await vi.waitFor(async () => expect(await stored(store)).toHaveLength(6), { timeout: 2000, interval: 10 });
    await writer.close();
    expect(await stored(store)).toHaveLength(7);
  });

  it("close() writes what is left, and records made after it are written at once", async () => {
    const store = openStore();
    const writer = requestLogWriter({ store, logger: silent, flushMs: 60_000 });
    writer.record(row());
    await writer.close();
    expect(await stored(store)).toHaveLength(1);
    writer.record(row());
    await writer.flush();
    expect(await stored(store)).toHaveLength(2);
  });

  it("logs the records it could not write, and writes the rest of their batch", async () => {
    const store = openStore();
    const warn = vi.fn();
    const logger = Object.assign(pino({ level: "silent" }), { warn });
    const writer = requestLogWriter({ store, logger, flushMs: 60_000 });
    const duplicate = row();
    await store.insert("request_log", duplicate);
    const next = row();
    writer.record(duplicate);
    writer.record(next);
    await writer.flush();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith(expect.objectContaining({ records: 1 }), "could not write the request log");
    expect((await stored(store)).map((r) => r.id).sort()).toEqual([duplicate.id, next.id].sort());
  });
});

describe("the operation a request is counted under (metrics)", () => {
  const operationOf = operationResolver(contractOperations());
  const req = (method: string, path: string, openapi?: unknown) => ({ method, path, openapi }) as unknown as Request;

  it("is the operation the contract's validator matched", () => {
    expect(operationOf(req("GET", "/v1/charges/tx_1", { schema: { operationId: "getCharge" } }))).toBe("getCharge");
  });

  it("is found from the method and path template for requests refused before the validator", () => {
    expect(operationOf(req("GET", "/v1/charges/tx_9Lm2QwErTy7UiOp3AsDf5GhJ"))).toBe("getCharge");
    expect(operationOf(req("POST", "/v1/charges"))).toBe("createCharge");
    expect(operationOf(req("GET", "/v1/charges"))).toBe("listCharges");
    expect(operationOf(req("HEAD", "/v1/charges"))).toBe("listCharges");
    // The console's API requests are the same operations under its prefix.
    expect(operationOf(req("GET", "/console/api/v1/charges"))).toBe("listCharges");
  });

  it("is `other` for anything that is not an operation of the contract, whatever its path", () => {
    expect(OTHER_OPERATION).toBe("other");
    expect(operationOf(req("GET", "/docs"))).toBe("other");
    expect(operationOf(req("GET", "/v1/charges/tx_1/nothing"))).toBe("other");
    expect(operationOf(req("DELETE", "/v1/charges"))).toBe("other");
    expect(operationOf(req("GET", "/v1/charges/", { schema: {} }))).toBe("other");
  });
});

describe("Server-Timing", () => {
  it("is on every answer, however it is sent: the server's own time, in milliseconds", async () => {
    const express = (await import("express")).default;
    const { observability } = await import("./observability.ts");
    const app = express();
    app.use(observability({ logger: silent, now: () => new Date(), requestLog: null }));
    app.get("/json", (_req, res) => {
      res.json({ ok: true });
    });
    app.get("/end", (_req, res) => {
      res.status(204).end();
    });
    app.get("/stream", (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end("data: x\n\n");
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const { port } = server.address() as { port: number };
      for (const path of ["/json", "/end", "/stream", "/nowhere"]) {
        const response = await fetch(`http://127.0.0.1:${port}${path}`);
        await response.arrayBuffer();
        expect(response.headers.get("server-timing"), path).toMatch(/^app;dur=\d+\.\d$/);
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
