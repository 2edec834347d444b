import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import express, { type NextFunction, type Request, type Response } from "express";
import { pino } from "pino";
import { afterEach, expect, it } from "vitest";
import { type AppStore, COLLECTIONS, type Docs } from "../domain/areas.ts";
import type { Caller } from "../domain/kernel/caller.ts";
import { commit, type IdempotencyScope } from "../domain/kernel/commit.ts";
import { DomainError } from "../domain/kernel/errors.ts";
import { newId } from "../domain/kernel/ids.ts";
import { openSqliteStore } from "../store/sqlite.ts";
import { errorMiddleware } from "./errors.ts";
import { idempotency } from "./idempotency.ts";

// The Idempotency-Key middleware on a store that runs a transaction twice, as MongoDB's withTransaction
// does after a transient error (store/port.ts, Store.transaction): the first run records the outcome and is
// rolled back, the second ends in a refusal. The recorded-with-the-change flag may only come from a run
// that committed (TxOps.afterCommit); set by the discarded run, it kept the refusal from being stored
// and left the key in flight, so the client's retry got 409 instead of the refusal.

const ROLLED_BACK = new Error("transient: this run is discarded");

/** The store, except that its first transaction runs fn once to the end, rolls that run back, then runs fn again. */
function retryingFirstTransaction(store: AppStore): AppStore {
  let retried = false;
  return {
    ...store,
    async transaction(fn) {
      if (!retried) {
        retried = true;
        await store
          .transaction(async (tx) => {
            await fn(tx);
            throw ROLLED_BACK;
          })
          .catch((error: unknown) => {
            if (error !== ROLLED_BACK) throw error;
          });
      }
      return store.transaction(fn);
    },
  };
}

let server: Server | undefined;
let store: AppStore | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await store?.close();
});

it("stores the refusal of a transaction's last run, not the outcome of a run that was rolled back", async () => {
  const base = openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
  store = base;
  const retrying = retryingFirstTransaction(base);
  const app = express();
  app.use(express.json());
  app.use((_req: Request, res: Response, next: NextFunction) => {
    res.locals.requestId = newId("req");
    res.locals.caller = { keyId: "kid_test", livemode: false, scopes: ["*"], keyPrefix: "key_test_abcd" };
    next();
  });
  const options = {
    store: base,
    now: () => new Date(),
    ttlSeconds: 3600,
    lockSeconds: 60,
    logger: pino({ level: "silent" }),
  };
  let runs = 0;
  app.post("/things", idempotency(options, { sensitive: false }), async (req, res, next) => {
    try {
      const scope = res.locals.idempotency as IdempotencyScope;
      const caller: Caller = {
        ...(res.locals.caller as Caller),
        requestId: String(res.locals.requestId),
        outcome: scope.recorder((result) => ({ status: 201, body: result })),
      };
      const made = await commit(retrying, caller, async () => {
        runs++;
        // The second run finds the world changed (another request got there first): a refusal. Not a
        // `conflict`, which says "retry" and is never stored (idempotency.ts raced).
        if (runs === 2) throw new DomainError("invalid_state_transition", "Someone else got there first.");
        return { id: "thing_1", name: String(req.body.name) };
      });
      res.status(201).json(made);
    } catch (error) {
      next(error);
    }
  });
  app.use(errorMiddleware(pino({ level: "silent" })));
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/things`;
  const send = () =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": "key-1" },
      body: JSON.stringify({ name: "x" }),
    });

  const first = await send();
  expect(first.status).toBe(409);
  const firstBody = await first.text();
  expect(runs).toBe(2);

  // The retry replays the refusal; it does not find the key still in flight.
  const retry = await send();
  expect(retry.headers.get("idempotent-replayed")).toBe("true");
  expect(retry.status).toBe(409);
  expect(await retry.text()).toBe(firstBody);
  expect(runs).toBe(2);
});
