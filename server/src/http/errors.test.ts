import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { pino } from "pino";
import { afterEach, expect, it } from "vitest";
import { StoreBusyError } from "../store/port.ts";
import { errorMiddleware, STORE_BUSY_RETRY_AFTER_SECONDS } from "./errors.ts";

// A store that stayed busy (store/port.ts, StoreBusyError: another instance held the SQLite file's write
// lock for longer than a write waits) is an outage of a moment: 503 with Retry-After (StoreBusy in
// spec/common/problems.tsp), never the 500 "database is locked" of issue 36.

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

it("answers a busy store with 503 service_unavailable and Retry-After, not 500", async () => {
  const app = express();
  app.use((_req, res, next) => {
    res.locals.requestId = "req_busy";
    next();
  });
  app.post("/things", () => {
    throw new StoreBusyError({ cause: Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" }) });
  });
  app.use(errorMiddleware(pino({ level: "silent" })));
  server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server?.once("listening", resolve));
  const { port } = server.address() as AddressInfo;

  const answer = await fetch(`http://127.0.0.1:${port}/things`, { method: "POST" });
  expect(answer.status).toBe(503);
  expect(answer.headers.get("retry-after")).toBe(String(STORE_BUSY_RETRY_AFTER_SECONDS));
  expect(answer.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  const body = (await answer.json()) as { code: string; detail: string; request_id: string };
  expect(body).toMatchObject({ code: "service_unavailable", status: 503, request_id: "req_busy" });
  expect(body.detail).toContain("Retry-After");
  expect(body.detail).not.toContain("locked");
});
