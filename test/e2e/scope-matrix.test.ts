import { OPERATIONS, SCOPES } from "@payments/contract/operations";
import { publicKeyNamespace } from "@payments/server";
import { beforeAll, describe, expect, it } from "vitest";
import { call, type Env, RECIPES, sandboxEnv } from "../support/recipes.ts";
import { clientFor, createSandbox, storedIdempotencyRecord, useServer } from "./fixtures.ts";

// The security matrix, generated from the contract (each operation's `x-scopes`): for every operation in the
// document, a key with the scope it declares succeeds, a key with any other scope gets 403, no key gets 401,
// and an object of the other environment answers 404. Public operations (`security: []`) succeed without a
// key and with any key. Adding an operation without a request recipe (support/recipes.ts) fails this suite.

/** Every scope but `*`, which grants everything. */
const ALL_SCOPES = SCOPES.filter((s) => s !== "*");

describe("scope matrix (every operation in the contract)", () => {
  const { server, client } = useServer();
  let sandbox: Env;
  let live: Env;

  beforeAll(async () => {
    sandbox = { server, client, live: false };
    live = { server, client: clientFor(server, await server.key(["*"], { live: true })), live: true };
  });

  it("has a recipe for every operation in the document, and no recipe for an operation it lacks", () => {
    expect(Object.keys(RECIPES).sort()).toEqual(OPERATIONS.map((op) => op.operationId).sort());
  });

  function urlOf(op: (typeof OPERATIONS)[number], path: Record<string, string>): URL {
    return new URL(
      op.path.replace(/\{(\w+)\}/g, (_, name: string) => path[name] ?? ""),
      server.url,
    );
  }

  // Public operations (`security: []`, declared with x-public) need no key, and a key changes nothing.
  for (const op of OPERATIONS.filter((o) => o.public)) {
    describe(`${op.operationId} (${op.method.toUpperCase()} ${op.path}) is public`, () => {
      it("succeeds without a key", async () => {
        const { path, body } = await RECIPES[op.operationId](sandbox);
        const res = await fetch(urlOf(op, path), {
          method: op.method.toUpperCase(),
          ...(body === undefined
            ? {}
            : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
        });
        expect(res.status, await res.text()).toBeLessThan(300);
      });

      it("succeeds with a key of any scope, and with an unknown key", async () => {
        const { path, body, query } = await RECIPES[op.operationId](sandbox);
        for (const key of [await server.key(["merchants"]), `key_test_${"x".repeat(32)}`]) {
          const { response, error } = await call(clientFor(server, key), op, path, body, undefined, query);
          expect(response.status, JSON.stringify(error)).toBeLessThan(300);
        }
      });

      // Excluded: Adyen's notification endpoint, whose items are made exactly-once by their own dedupe key
      // in the transaction of their effect (domain/acquirer-notifications), not by an Idempotency-Key, which
      // Adyen never sends; a key sent anyway is kept as for any POST, outside the change's transaction.
      if (op.method === "post" && op.operationId !== "receiveAdyenNotifications") {
        // The idempotency rule holds for public POSTs too; their keys live apart, per object (its path).
        it("records its Idempotency-Key outcome with the change, in its own key space", async () => {
          const { path, body } = await RECIPES[op.operationId](sandbox);
          const key = `matrix-${op.operationId}-${Math.random()}`;
          const first = await call(sandbox.client, op, path, body, { "Idempotency-Key": key });
          expect(first.response.status, JSON.stringify(first.error)).toBeLessThan(300);
          const namespace = publicKeyNamespace(urlOf(op, path).pathname);
          const record = await storedIdempotencyRecord(server, key, namespace);
          expect(record).toMatchObject({ state: "done", atomic: true, withheld: op.sensitive });
          expect(await storedIdempotencyRecord(server, key)).toBeNull();
          const again = await call(sandbox.client, op, path, body, { "Idempotency-Key": key });
          expect(again.response.headers.get("idempotent-replayed")).toBe("true");
          expect(again.data).toEqual(first.data);
        });
      }
    });
  }

  for (const op of OPERATIONS.filter((o) => !o.public)) {
    describe(`${op.operationId} (${op.method.toUpperCase()} ${op.path}) needs ${op.scopes.join(" | ")}`, () => {
      it("succeeds with a key holding exactly that scope", async () => {
        const { path, body, query } = await RECIPES[op.operationId](sandbox);
        const { response, error } = await call(
          clientFor(server, await server.key([...op.scopes])),
          op,
          path,
          body,
          undefined,
          query,
        );
        expect(response.status, JSON.stringify(error)).toBeLessThan(300);
      });

      if (op.method === "post") {
        // The contract's idempotency rules (spec/main.tsp), for every POST: the key's outcome commits with
        // the change (so the use case wrote through domain/kernel/commit.ts), and an answer carrying a secret or
        // a card number is never stored.
        it(`records its Idempotency-Key outcome with the change${op.sensitive ? ", without the answer" : ""}`, async () => {
          const { path, body } = await RECIPES[op.operationId](sandbox);
          const key = `matrix-${op.operationId}-${Math.random()}`;
          const header = { "Idempotency-Key": key };
          const first = await call(sandbox.client, op, path, body, header);
          expect(first.response.status, JSON.stringify(first.error)).toBeLessThan(300);
          const record = await storedIdempotencyRecord(server, key);
          expect(record).toMatchObject({ state: "done", atomic: true, withheld: op.sensitive });
          const again = await call(sandbox.client, op, path, body, header);
          if (op.sensitive) {
            expect(record?.body).toBeNull();
            expect(again.response.status).toBe(409);
            expect(again.error).toMatchObject({ code: "idempotency_replay_unavailable" });
            // Nothing is replayed, so the answer does not say it was.
            expect(again.response.headers.get("idempotent-replayed")).toBeNull();
          } else {
            expect(again.response.headers.get("idempotent-replayed")).toBe("true");
            expect(again.response.status).toBe(first.response.status);
            expect(again.data).toEqual(first.data);
          }
        });
      }

      it("is 403 for a key holding every other scope", async () => {
        const others = ALL_SCOPES.filter((s) => !(op.scopes as readonly string[]).includes(s));
        const { path, body, query } = await RECIPES[op.operationId](sandbox);
        const { response, error } = await call(
          clientFor(server, await server.key(others)),
          op,
          path,
          body,
          undefined,
          query,
        );
        expect(response.status).toBe(403);
        expect(error).toMatchObject({ status: 403, code: "forbidden" });
        expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      });

      it("is 401 without a key, and with an unknown key", async () => {
        const { path, body, query } = await RECIPES[op.operationId](sandbox);
        const url = urlOf(op, path);
        const init = {
          method: op.method.toUpperCase(),
          headers: { "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        };
        const none = await fetch(url, init);
        expect(none.status).toBe(401);
        expect(await none.json()).toMatchObject({ code: "unauthorized" });
        const unknown = await call(clientFor(server, `key_test_${"x".repeat(32)}`), op, path, body, undefined, query);
        expect(unknown.response.status).toBe(401);
      });

      if (op.path.includes("{id}")) {
        it("is 404 for an object of the other environment", async () => {
          const { path, body, query } = await RECIPES[op.operationId](live);
          const { response, error } = await call(sandbox.client, op, path, body, undefined, query);
          expect(response.status).toBe(404);
          expect(error).toMatchObject({ code: "not_found" });
        });
      }
    });
  }
});

// Sandboxes on demand (spec/resources/sandboxes.tsp): for every operation on an object by id, an object
// made in one sandbox answers 404 to a key of another sandbox and to a key of the default sandbox, and one
// of the default sandbox answers 404 inside a sandbox: 0 answers that leak across.
describe("cross-sandbox matrix (every operation on an object by id)", () => {
  const { server, client } = useServer();
  it("answers 404 for every object of another sandbox and of the default sandbox", async () => {
    const made = await createSandbox(server, client, "matrix A");
    const a = await sandboxEnv(server, made.id, made.client);
    const b = (await createSandbox(server, client, "matrix B")).client;
    const leaks: string[] = [];
    // Sandboxes themselves are managed only with the account's keys (a sandbox's key gets 403 for them:
    // e2e/sandboxes.test.ts), so they cannot be made inside one.
    const managing = new Set(["getSandbox", "deleteSandbox"]);
    for (const op of OPERATIONS.filter((o) => !o.public && o.path.includes("{id}") && !managing.has(o.operationId))) {
      // Made in sandbox A, asked from sandbox B and from the default sandbox.
      const inA = await RECIPES[op.operationId](a);
      for (const [who, other] of [
        ["sandbox B", b],
        ["default sandbox", client],
      ] as const) {
        const { response } = await call(other, op, inA.path, inA.body, undefined, inA.query);
        if (response.status !== 404) leaks.push(`${op.operationId}: A's object answered ${response.status} to ${who}`);
      }
      // Made in the default sandbox, asked from sandbox A.
      const inDefault = await RECIPES[op.operationId]({ server, client, live: false });
      const { response } = await call(a.client, op, inDefault.path, inDefault.body, undefined, inDefault.query);
      if (response.status !== 404)
        leaks.push(`${op.operationId}: the default's object answered ${response.status} in A`);
    }
    expect(leaks).toEqual([]);
    // Every operation's fixture twice, one at a time: minutes on a busy machine.
  }, 600_000);
});
