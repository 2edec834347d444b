import { type PaymentsClient, unwrap } from "@payments/client";
import { OPERATIONS, SCOPES } from "@payments/contract/operations";
import { idempotencyRecordId } from "@payments/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/server.ts";
import {
  cardBody,
  cardChargeBody,
  clientFor,
  createCharge,
  createEvaluation,
  createFraudList,
  createFraudListItem,
  createMerchant,
  createPixCharge,
  createToken,
  createWebhookEndpoint,
  insertEvent,
  REVIEW_CARD,
} from "./fixtures.ts";

// The security matrix, generated from the contract (issue #3): for every operation in the document,
// a key with the scope it declares succeeds, a key with any other scope gets 403, no key gets 401,
// and an object of the other environment answers 404. Public operations (`security: []`) succeed
// without a key and with any key. Adding an operation without a request recipe below fails this suite.

/** Every scope but `*`, which grants everything. */
const ALL_SCOPES = SCOPES.filter((s) => s !== "*");

type Recipe = (env: Env) => Promise<{ path: Record<string, string>; body?: unknown }>;
interface Env {
  server: TestServer;
  client: PaymentsClient;
  live: boolean;
}

/** How to make a valid request for each operation; ids come from fresh fixtures in the given environment. */
const RECIPES: Record<(typeof OPERATIONS)[number]["operationId"], Recipe> = {
  createMerchant: async () => ({ path: {}, body: { name: "Matrix merchant" } }),
  getMerchant: async ({ client }) => ({ path: { id: (await createMerchant(client)).id } }),
  listMerchants: async () => ({ path: {} }),
  updateMerchant: async ({ client }) => ({
    path: { id: (await createMerchant(client)).id },
    body: { name: "Renamed" },
  }),
  createToken: async () => ({ path: {}, body: cardBody() }),
  getToken: async ({ client }) => ({ path: { id: (await createToken(client)).id } }),
  deleteToken: async ({ client }) => ({ path: { id: (await createToken(client)).id } }),
  revealToken: async ({ client }) => ({ path: { id: (await createToken(client)).id } }),
  createServiceKey: async () => ({ path: {}, body: { name: "matrix", scopes: ["merchants"] } }),
  listServiceKeys: async () => ({ path: {} }),
  getServiceKey: async ({ server, live }) => ({ path: { id: await keyId(server, live) } }),
  rotateServiceKey: async ({ server, live }) => ({ path: { id: await keyId(server, live) }, body: {} }),
  revokeServiceKey: async ({ server, live }) => ({ path: { id: await keyId(server, live) } }),
  getMerchantBalance: async ({ client }) => ({ path: { id: (await createMerchant(client)).id } }),
  createCharge: async ({ client }) => ({ path: {}, body: await cardChargeBody(client) }),
  getCharge: async ({ client }) => ({ path: { id: (await createCharge(client)).id } }),
  listCharges: async () => ({ path: {} }),
  captureCharge: async ({ client }) => ({
    path: { id: (await createCharge(client, { capture: false })).id },
    body: {},
  }),
  voidCharge: async ({ client }) => ({ path: { id: (await createCharge(client, { capture: false })).id } }),
  createRefund: async ({ client }) => ({ path: { id: (await createCharge(client)).id }, body: { amount: 100 } }),
  listRefunds: async ({ client }) => ({ path: { id: (await createCharge(client)).id } }),
  sandboxCompleteCharge: async ({ client }) => ({ path: { id: (await createPixCharge(client)).id } }),
  sandboxExpireCharge: async ({ client }) => ({ path: { id: (await createPixCharge(client)).id } }),
  approveChargeReview: async ({ client }) => ({ path: { id: (await createCharge(client, { card: REVIEW_CARD })).id } }),
  rejectChargeReview: async ({ client }) => ({ path: { id: (await createCharge(client, { card: REVIEW_CARD })).id } }),
  createFraudEvaluation: async () => ({ path: {}, body: { amount: 2500, currency: "USD" } }),
  getFraudEvaluation: async ({ client }) => ({ path: { id: (await createEvaluation(client)).id } }),
  listFraudEvaluations: async () => ({ path: {} }),
  createFraudList: async () => ({ path: {}, body: { name: "Matrix list", kind: "email", action: "block" } }),
  listFraudLists: async () => ({ path: {} }),
  getFraudList: async ({ client }) => ({ path: { id: (await createFraudList(client)).id } }),
  deleteFraudList: async ({ client }) => ({ path: { id: (await createFraudList(client)).id } }),
  createFraudListItem: async ({ client }) => ({
    path: { id: (await createFraudList(client)).id },
    body: { value: "matrix@example.com" },
  }),
  listFraudListItems: async ({ client }) => ({ path: { id: (await createFraudList(client)).id } }),
  deleteFraudListItem: async ({ client }) => ({ path: { id: (await createFraudListItem(client)).id } }),
  getFraudSettings: async () => ({ path: {} }),
  // The default value: the matrix's other charges must keep the default thresholds.
  updateFraudSettings: async () => ({ path: {}, body: { review_threshold: 65 } }),
  listEvents: async () => ({ path: {} }),
  getEvent: async ({ server, live }) => ({ path: { id: (await insertEvent(server, live)).id } }),
  listEventDeliveries: async ({ server, live }) => ({ path: { id: (await insertEvent(server, live)).id } }),
  redeliverEvent: async ({ server, client, live }) => ({
    path: { id: (await insertEvent(server, live)).id },
    body: { endpoint_id: (await createWebhookEndpoint(client, live)).id },
  }),
  createWebhookEndpoint: async () => ({
    path: {},
    body: { url: "http://127.0.0.1:9/matrix", enabled_events: ["webhook_endpoint.test"] },
  }),
  listWebhookEndpoints: async () => ({ path: {} }),
  getWebhookEndpoint: async ({ client, live }) => ({ path: { id: (await createWebhookEndpoint(client, live)).id } }),
  updateWebhookEndpoint: async ({ client, live }) => ({
    path: { id: (await createWebhookEndpoint(client, live)).id },
    body: { description: "renamed" },
  }),
  deleteWebhookEndpoint: async ({ client, live }) => ({
    path: { id: (await createWebhookEndpoint(client, live)).id },
  }),
  rotateWebhookEndpointSecret: async ({ client, live }) => ({
    path: { id: (await createWebhookEndpoint(client, live)).id },
    body: {},
  }),
  testWebhookEndpoint: async ({ client, live }) => ({ path: { id: (await createWebhookEndpoint(client, live)).id } }),
  recoverWebhookEndpoint: async ({ client, live }) => ({
    path: { id: (await createWebhookEndpoint(client, live)).id },
    body: { since: new Date(Date.now() - 3_600_000).toISOString() },
  }),
  listWebhookEndpointDeliveries: async ({ client, live }) => ({
    path: { id: (await createWebhookEndpoint(client, live)).id },
  }),
  getWebhookDelivery: async ({ client, live }) => {
    const endpoint = await createWebhookEndpoint(client, live);
    const delivery = unwrap(
      await client.POST("/v1/webhook_endpoints/{id}/test", { params: { path: { id: endpoint.id } } }),
    );
    return { path: { id: delivery.id } };
  },
  listRequestLog: async () => ({ path: {} }),
  getLiveness: async () => ({ path: {} }),
  getReadiness: async () => ({ path: {} }),
};

async function keyId(server: TestServer, live: boolean): Promise<string> {
  const { key } = await server.running.domain.serviceKeys.issue(live, { name: "fixture", scopes: ["fraud"] });
  return key.id;
}

function call(
  client: PaymentsClient,
  op: (typeof OPERATIONS)[number],
  path: Record<string, string>,
  body?: unknown,
  header?: Record<string, string>,
) {
  const method = op.method.toUpperCase() as "GET" | "POST" | "PATCH" | "DELETE";
  // The matrix is generic over operations, so the call is untyped here; the per-resource suites use the typed client.
  const fn = (
    client as unknown as Record<
      string,
      (url: string, init: unknown) => Promise<{ response: Response; data?: unknown; error?: unknown }>
    >
  )[method];
  if (!fn) throw new Error(`client has no ${method}`);
  return fn(op.path, { params: { path, ...(header ? { header } : {}) }, ...(body === undefined ? {} : { body }) });
}

describe("scope matrix (every operation in the contract)", () => {
  let server: TestServer;
  let sandbox: Env;
  let live: Env;

  beforeAll(async () => {
    server = await startTestServer();
    sandbox = { server, client: clientFor(server, server.sandboxKey), live: false };
    live = { server, client: clientFor(server, await server.key(["*"], { live: true })), live: true };
  });
  afterAll(() => server.close());

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
        const { path, body } = await RECIPES[op.operationId](sandbox);
        for (const key of [await server.key(["merchants"]), `key_test_${"x".repeat(32)}`]) {
          const { response, error } = await call(clientFor(server, key), op, path, body);
          expect(response.status, JSON.stringify(error)).toBeLessThan(300);
        }
      });
    });
  }

  for (const op of OPERATIONS.filter((o) => !o.public)) {
    describe(`${op.operationId} (${op.method.toUpperCase()} ${op.path}) needs ${op.scopes.join(" | ")}`, () => {
      it("succeeds with a key holding exactly that scope", async () => {
        const { path, body } = await RECIPES[op.operationId](sandbox);
        const { response, error } = await call(clientFor(server, await server.key([...op.scopes])), op, path, body);
        expect(response.status, JSON.stringify(error)).toBeLessThan(300);
      });

      if (op.method === "post") {
        // The contract's idempotency rules (spec/main.tsp), for every POST: the key's outcome commits with
        // the change (so the use case wrote through domain/commit.ts), and an answer carrying a secret or
        // a card number is never stored.
        it(`records its Idempotency-Key outcome with the change${op.sensitive ? ", without the answer" : ""}`, async () => {
          const { path, body } = await RECIPES[op.operationId](sandbox);
          const key = `matrix-${op.operationId}-${Math.random()}`;
          const header = { "Idempotency-Key": key };
          const first = await call(sandbox.client, op, path, body, header);
          expect(first.response.status, JSON.stringify(first.error)).toBeLessThan(300);
          const record = await server.running.store.get("idempotency", idempotencyRecordId(false, key));
          expect(record).toMatchObject({ state: "done", atomic: true, withheld: op.sensitive });
          const again = await call(sandbox.client, op, path, body, header);
          expect(again.response.headers.get("idempotent-replayed")).toBe("true");
          if (op.sensitive) {
            expect(record?.body).toBeNull();
            expect(again.response.status).toBe(409);
            expect(again.error).toMatchObject({ code: "idempotency_replay_unavailable" });
          } else {
            expect(again.response.status).toBe(first.response.status);
            expect(again.data).toEqual(first.data);
          }
        });
      }

      it("is 403 for a key holding every other scope", async () => {
        const others = ALL_SCOPES.filter((s) => !(op.scopes as readonly string[]).includes(s));
        const { path, body } = await RECIPES[op.operationId](sandbox);
        const { response, error } = await call(clientFor(server, await server.key(others)), op, path, body);
        expect(response.status).toBe(403);
        expect(error).toMatchObject({ status: 403, code: "forbidden" });
        expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      });

      it("is 401 without a key, and with an unknown key", async () => {
        const { path, body } = await RECIPES[op.operationId](sandbox);
        const url = urlOf(op, path);
        const init = {
          method: op.method.toUpperCase(),
          headers: { "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        };
        const none = await fetch(url, init);
        expect(none.status).toBe(401);
        expect(await none.json()).toMatchObject({ code: "unauthorized" });
        const unknown = await call(clientFor(server, `key_test_${"x".repeat(32)}`), op, path, body);
        expect(unknown.response.status).toBe(401);
      });

      if (op.path.includes("{id}")) {
        it("is 404 for an object of the other environment", async () => {
          const { path, body } = await RECIPES[op.operationId](live);
          const { response, error } = await call(sandbox.client, op, path, body);
          expect(response.status).toBe(404);
          expect(error).toMatchObject({ code: "not_found" });
        });
      }
    });
  }
});
