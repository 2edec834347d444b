/**
 * The Prism sandbox mock (DESIGN §1: QA runs it from the same document) answers every operation of
 * the contract, through the typed client, with answers the contract allows.
 *
 * Prism runs from its own bin (not npx, so killing it stops it) on 127.0.0.1 and a free port, with
 * `--errors` so that a request the document does not allow fails instead of being mocked.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer, Socket } from "node:net";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createPaymentsClient, PaymentsApiError, type PaymentsClient, unwrap } from "@payments/client";
import { OPERATIONS } from "@payments/contract/operations";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadContract, OPENAPI_31_PATH, type ResponseCheck } from "../support/openapi.ts";

const HOST = "127.0.0.1";
const START_TIMEOUT_MS = 30_000;
const contract = loadContract();

/** Ids of the document's examples, so the calls look like what an integrator would send. */
const ids = {
  charge: "tx_9Lm2QwErTy7UiOp3AsDf5GhJ",
  heldCharge: "tx_6Yh7Uj8Ik9Ol0Pz1Xc2Vb3Nm",
  evaluation: "fe_8Kq3Zt7LmW2xP9vR4nB6yC1d",
  fraudList: "fl_3Vb7Nm1Qw5Er9Ty2Ui6Op4As",
  fraudListItem: "fli_6Gh2Jk8Lz4Xc1Vb9Nm5Qw3Er",
  event: "evt_5Tg7YhUj9IkOl2PzXc4VbNm6",
  merchant: "mch_4fQx9ZkT2mB7rLp1WcYd8sNa",
  serviceKey: "kid_2Bn8VcXz4LkJh6GfDs1QaWe3",
  token: "tok_7Hs2KdP9qLm3XvB8nRt5YwZc",
  endpoint: "we_3Fg7Hj2Kl9Zx4Cv8Bn1Mq6Wa",
  delivery: "whd_7Yh2Nb5Vc8Xz1Lk4Jh6Gf9Ds",
};

/** One call per operation, keyed by the operationId it must reach. */
const calls: Record<string, (client: PaymentsClient) => Promise<unknown>> = {
  createCharge: (c) =>
    c.POST("/v1/charges", {
      body: {
        merchant_id: ids.merchant,
        amount: 2500,
        currency: "USD",
        payment_method: { type: "card", token: ids.token },
        capture: false,
        description: "Order #1042",
        metadata: { order_id: "1042" },
        customer: { email: "ada@example.com", ip: "203.0.113.7", country: "GB" },
      },
    }),
  listCharges: (c) =>
    c.GET("/v1/charges", { params: { query: { merchant_id: ids.merchant, status: "captured", limit: 10 } } }),
  getCharge: (c) => c.GET("/v1/charges/{id}", { params: { path: { id: ids.charge } } }),
  captureCharge: (c) =>
    c.POST("/v1/charges/{id}/capture", { params: { path: { id: ids.charge } }, body: { amount: 2000 } }),
  voidCharge: (c) => c.POST("/v1/charges/{id}/void", { params: { path: { id: ids.charge } } }),
  createRefund: (c) =>
    c.POST("/v1/charges/{id}/refunds", {
      params: { path: { id: ids.charge } },
      body: { amount: 500, reason: "requested_by_customer", metadata: { ticket: "T-7" } },
    }),
  listRefunds: (c) => c.GET("/v1/charges/{id}/refunds", { params: { path: { id: ids.charge }, query: { limit: 10 } } }),
  sandboxCompleteCharge: (c) => c.POST("/v1/sandbox/charges/{id}/complete", { params: { path: { id: ids.charge } } }),
  sandboxExpireCharge: (c) => c.POST("/v1/sandbox/charges/{id}/expire", { params: { path: { id: ids.charge } } }),
  approveChargeReview: (c) => c.POST("/v1/charges/{id}/review/approve", { params: { path: { id: ids.heldCharge } } }),
  rejectChargeReview: (c) => c.POST("/v1/charges/{id}/review/reject", { params: { path: { id: ids.heldCharge } } }),
  createFraudEvaluation: (c) =>
    c.POST("/v1/fraud/evaluations", {
      body: {
        amount: 4900,
        currency: "EUR",
        card: { bin: "424242", country: "GB" },
        customer: { email: "ada@example.com", ip: "203.0.113.7", country: "DE" },
      },
    }),
  getFraudEvaluation: (c) => c.GET("/v1/fraud/evaluations/{id}", { params: { path: { id: ids.evaluation } } }),
  listFraudEvaluations: (c) =>
    c.GET("/v1/fraud/evaluations", { params: { query: { tx_id: ids.charge, decision: "block", limit: 10 } } }),
  createFraudList: (c) =>
    c.POST("/v1/fraud/lists", { body: { name: "VPN ranges", kind: "ip_address", action: "flag" } }),
  listFraudLists: (c) => c.GET("/v1/fraud/lists", { params: { query: { kind: "ip_address", limit: 10 } } }),
  getFraudList: (c) => c.GET("/v1/fraud/lists/{id}", { params: { path: { id: ids.fraudList } } }),
  deleteFraudList: (c) => c.DELETE("/v1/fraud/lists/{id}", { params: { path: { id: ids.fraudList } } }),
  createFraudListItem: (c) =>
    c.POST("/v1/fraud/lists/{id}/items", {
      params: { path: { id: ids.fraudList } },
      body: { value: "198.51.100.0/24" },
    }),
  listFraudListItems: (c) =>
    c.GET("/v1/fraud/lists/{id}/items", { params: { path: { id: ids.fraudList }, query: { limit: 10 } } }),
  deleteFraudListItem: (c) => c.DELETE("/v1/fraud/list_items/{id}", { params: { path: { id: ids.fraudListItem } } }),
  getFraudSettings: (c) => c.GET("/v1/fraud/settings"),
  updateFraudSettings: (c) =>
    c.PATCH("/v1/fraud/settings", {
      body: { review_threshold: 50, block_threshold: 80, review_window_seconds: 86400 },
    }),
  listRequestLog: (c) =>
    c.GET("/v1/request_log", { params: { query: { limit: 2, method: "GET", outcome: "failed" } } }),
  listEvents: (c) => c.GET("/v1/events", { params: { query: { limit: 2, type: "fraud.evaluated" } } }),
  getEvent: (c) => c.GET("/v1/events/{id}", { params: { path: { id: ids.event } } }),
  createMerchant: (c) =>
    c.POST("/v1/merchants", { body: { name: "Acme Coffee Roasters", status: "active", metadata: { crm_id: "A-1" } } }),
  listMerchants: (c) => c.GET("/v1/merchants", { params: { query: { status: "active", limit: 10 } } }),
  getMerchant: (c) => c.GET("/v1/merchants/{id}", { params: { path: { id: ids.merchant } } }),
  updateMerchant: (c) =>
    c.PATCH("/v1/merchants/{id}", { params: { path: { id: ids.merchant } }, body: { status: "suspended" } }),
  getMerchantBalance: (c) => c.GET("/v1/merchants/{id}/balance", { params: { path: { id: ids.merchant } } }),
  createServiceKey: (c) => c.POST("/v1/service_keys", { body: { name: "sandbox QA", scopes: ["tokenization"] } }),
  listServiceKeys: (c) => c.GET("/v1/service_keys", { params: { query: { limit: 5 } } }),
  getServiceKey: (c) => c.GET("/v1/service_keys/{id}", { params: { path: { id: ids.serviceKey } } }),
  revokeServiceKey: (c) => c.POST("/v1/service_keys/{id}/revoke", { params: { path: { id: ids.serviceKey } } }),
  rotateServiceKey: (c) =>
    c.POST("/v1/service_keys/{id}/rotate", {
      params: { path: { id: ids.serviceKey } },
      body: { grace_period_seconds: 3600 },
    }),
  createToken: (c) =>
    c.POST("/v1/tokens", {
      body: { card: "4242424242424242", holder: "Ada Lovelace", exp_month: 12, exp_year: 2034, cvc: "123" },
    }),
  getToken: (c) => c.GET("/v1/tokens/{id}", { params: { path: { id: ids.token } } }),
  deleteToken: (c) => c.DELETE("/v1/tokens/{id}", { params: { path: { id: ids.token } } }),
  revealToken: (c) => c.POST("/v1/tokens/{id}/reveal", { params: { path: { id: ids.token } } }),
  createWebhookEndpoint: (c) =>
    c.POST("/v1/webhook_endpoints", {
      body: {
        url: "https://acme.example/payments/webhooks",
        enabled_events: ["payment.captured", "payment.refunded"],
        description: "Order fulfilment",
      },
    }),
  listWebhookEndpoints: (c) => c.GET("/v1/webhook_endpoints", { params: { query: { limit: 10 } } }),
  getWebhookEndpoint: (c) => c.GET("/v1/webhook_endpoints/{id}", { params: { path: { id: ids.endpoint } } }),
  updateWebhookEndpoint: (c) =>
    c.PATCH("/v1/webhook_endpoints/{id}", {
      params: { path: { id: ids.endpoint } },
      body: { enabled_events: ["*"], description: null, disabled: false },
    }),
  deleteWebhookEndpoint: (c) => c.DELETE("/v1/webhook_endpoints/{id}", { params: { path: { id: ids.endpoint } } }),
  rotateWebhookEndpointSecret: (c) =>
    c.POST("/v1/webhook_endpoints/{id}/rotate_secret", {
      params: { path: { id: ids.endpoint } },
      body: { grace_period_seconds: 3600 },
    }),
  testWebhookEndpoint: (c) => c.POST("/v1/webhook_endpoints/{id}/test", { params: { path: { id: ids.endpoint } } }),
  recoverWebhookEndpoint: (c) =>
    c.POST("/v1/webhook_endpoints/{id}/recover", {
      params: { path: { id: ids.endpoint } },
      body: { since: "2026-11-20T00:00:00Z" },
    }),
  listWebhookEndpointDeliveries: (c) =>
    c.GET("/v1/webhook_endpoints/{id}/deliveries", {
      params: { path: { id: ids.endpoint }, query: { status: "failed", limit: 10 } },
    }),
  getWebhookDelivery: (c) => c.GET("/v1/webhook_deliveries/{id}", { params: { path: { id: ids.delivery } } }),
  listEventDeliveries: (c) => c.GET("/v1/events/{id}/deliveries", { params: { path: { id: ids.event } } }),
  redeliverEvent: (c) =>
    c.POST("/v1/events/{id}/redeliver", {
      params: { path: { id: ids.event } },
      body: { endpoint_id: ids.endpoint },
    }),
  getLiveness: (c) => c.GET("/healthz"),
  getReadiness: (c) => c.GET("/readyz"),
};

let prism: ChildProcess | undefined;
let baseUrl = "";
/** operationIds that Prism answered, filled by the checking middleware. */
const exercised = new Set<string>();

/** A client whose every answer is checked against the contract on the way in. */
function checkedClient(): { client: PaymentsClient; checks: Array<ResponseCheck & { status: number }> } {
  const checks: Array<ResponseCheck & { status: number }> = [];
  // A 5xx from the mock would be a Prism bug, not a reason to wait: no retries.
  const client = createPaymentsClient({ baseUrl, apiKey: "key_test_4fQx9ZkT2mB7rLp1WcYd8sNa0123", maxRetries: 0 });
  client.use({
    async onResponse({ request, response, schemaPath }) {
      const check = await contract.checkFetchResponse(request.method, schemaPath, response);
      if (check.operationId) exercised.add(check.operationId);
      checks.push({ ...check, status: response.status });
    },
  });
  return { client, checks };
}

beforeAll(async () => {
  const port = await freePort();
  const bin = prismBin();
  prism = spawn(bin, ["mock", "-h", HOST, "-p", String(port), "--errors", OPENAPI_31_PATH], {
    // Its own process group, so afterAll can stop Prism and anything it started in one signal.
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  // Keep the tail of its output for the error message, and keep the pipes drained so Prism never blocks.
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-4000);
  };
  prism.stdout?.on("data", keep);
  prism.stderr?.on("data", keep);
  try {
    await waitForPort(port, prism);
  } catch (error) {
    throw new Error(`Prism did not start: ${(error as Error).message}\n${output}`);
  }
  baseUrl = `http://${HOST}:${port}`;
}, START_TIMEOUT_MS + 5_000);

afterAll(async () => {
  const child = prism;
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  process.kill(-child.pid, "SIGTERM");
  const timer = setTimeout(() => process.kill(-(child.pid as number), "SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
});

describe("Prism mock of the contract", () => {
  for (const [operationId, call] of Object.entries(calls)) {
    it(`${operationId} answers as documented`, async () => {
      const { client, checks } = checkedClient();
      await call(client);
      expect(checks).toHaveLength(1);
      const [check] = checks;
      expect(check?.operationId).toBe(operationId);
      expect(check?.errors).toEqual([]);
      // A 4xx here would mean Prism (run with --errors) found the client's request off-contract.
      expect(check?.status).toBeGreaterThanOrEqual(200);
      expect(check?.status).toBeLessThan(300);
    });
  }

  it("serves a documented error example as an RFC 9457 problem", async () => {
    const { client, checks } = checkedClient();
    const result = await client.GET("/v1/merchants/{id}", {
      params: { path: { id: ids.merchant } },
      headers: { Prefer: "code=404, example=not_found" },
    });
    expect(result.response.status).toBe(404);
    expect(result.response.headers.get("Content-Type")).toMatch(/^application\/problem\+json/);
    expect(checks).toEqual([{ operationId: "getMerchant", status: 404, errors: [] }]);
    expect(result.error).toMatchObject({ status: 404, code: "not_found" });
    expect(() => unwrap(result)).toThrow(PaymentsApiError);
    expect(() => unwrap(result)).toThrow(expect.objectContaining({ status: 404, code: "not_found" }));
  });

  it("answers the public operations without a key, and the others not", async () => {
    const publicOps = OPERATIONS.filter((op) => op.public);
    expect(publicOps.length).toBeGreaterThan(0);
    for (const op of publicOps) {
      const res = await fetch(`${baseUrl}${op.path}`, { method: op.method.toUpperCase() });
      const check = await contract.checkFetchResponse(op.method.toUpperCase(), op.path, res);
      expect(res.status, op.operationId).toBe(200);
      expect(check.errors).toEqual([]);
    }
    const keyless = await fetch(`${baseUrl}/v1/merchants`);
    expect(keyless.status).toBe(401);
  });

  it("refuses a request body the document does not allow (QA sees contract violations)", async () => {
    const auth = { Authorization: "Bearer key_test_4fQx9ZkT2mB7rLp1WcYd8sNa0123", "Content-Type": "application/json" };
    for (const body of [{}, { name: "x", colour: "red" }, { name: 42 }]) {
      const res = await fetch(`${baseUrl}/v1/merchants`, { method: "POST", headers: auth, body: JSON.stringify(body) });
      expect(res.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
  });

  it("has exercised every operation of the document", () => {
    const documented = contract.operations.map((op) => op.operationId).sort();
    expect(Object.keys(calls).sort()).toEqual(documented);
    expect([...exercised].sort()).toEqual(documented);
  });
});

/** A port that was free a moment ago: listen on port 0, note the port, close. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/** Prism's bin from test/node_modules or the repository root's node_modules (npm workspaces hoist it there). */
function prismBin(): string {
  const testDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  const candidates = [resolve(testDir, "node_modules/.bin/prism"), resolve(testDir, "../node_modules/.bin/prism")];
  const found = candidates.find((file) => existsSync(file));
  if (!found) throw new Error(`Prism is not installed (looked at ${candidates.join(", ")}); run npm install`);
  return found;
}

/** Resolves once the port accepts a connection; rejects if Prism exits first or the time runs out. */
async function waitForPort(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`it exited (${child.exitCode ?? child.signalCode})`);
    }
    if (await accepts(port)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`port ${port} not open after ${START_TIMEOUT_MS} ms`);
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => {
      socket.destroy();
      resolve(false);
    });
    socket.connect(port, HOST);
  });
}
