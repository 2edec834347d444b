/**
 * The Prism sandbox mock (QA runs it from the same document: `npm run mock`) answers every operation of
 * the contract, through the typed client, with answers the contract allows. What it shares with the
 * real server is in agreement.test.ts.
 */
import { createPaymentsClient, PaymentsApiError, type PaymentsClient, unwrap } from "@payments/client";
import { OPERATIONS } from "@payments/contract/operations";
import { rebaseExamples } from "@payments/server/served-document";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exampleRequest, firstRequestExampleName, firstSuccessExample } from "../support/examples.ts";
import { loadContract, type ResponseCheck } from "../support/openapi.ts";
import { type RunningPrism, startPrism } from "../support/prism.ts";

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
  cashout: "co_8Hn3Jk5Lp7Qr9St2Uv4Wx6Yz",
  balanceTransaction: "txn_8Jk2Lm4Np6Qr8St0Uv2Wx4Yz",
  paymentLink: "plink_3Xc5Vb7Nm9Qw2Er4Ty6Ui8Op",
  dispute: "dp_5Rt7Yu9Io2Pa4Sd6Fg8Hj1Kl",
  sandbox: "sbx_4Df6Gh8Jk1Lz3Xc5Vb7Nm9Qw",
};

/** The public pay operation's body, as the hosted page sends it. */
const payBody = {
  page_token: "v1.1763724135.Tb3kR9mQ2xW7pL4c.Jr5Xq0cW2v8tKn1bY6zHf3uLd9gSe4aPoM7iNwQxRk",
  payment_method: {
    type: "card" as const,
    number: "4242 4242 4242 4242",
    exp_month: 12,
    exp_year: 2031,
    cvc: "123",
    holder: "Ada Lovelace",
  },
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
  // Prism answers the stream's example text and closes: it cannot follow new events (docs/mock.md).
  streamEvents: (c) =>
    c.GET("/v1/events/stream", { params: { query: { type: ["payment.captured"], follow: false } }, parseAs: "text" }),
  getSandboxClock: (c) => c.GET("/v1/sandbox/clock"),
  advanceSandboxClock: (c) => c.POST("/v1/sandbox/clock/advance", { body: { seconds: 172800 } }),
  resetSandboxClock: (c) => c.POST("/v1/sandbox/clock/reset", {}),
  createSandbox: (c) => c.POST("/v1/sandboxes", { body: { name: "Checkout team CI" } }),
  listSandboxes: (c) => c.GET("/v1/sandboxes", { params: { query: { limit: 10 } } }),
  getSandbox: (c) => c.GET("/v1/sandboxes/{id}", { params: { path: { id: ids.sandbox } } }),
  deleteSandbox: (c) => c.DELETE("/v1/sandboxes/{id}", { params: { path: { id: ids.sandbox } } }),
  getEvent: (c) => c.GET("/v1/events/{id}", { params: { path: { id: ids.event } } }),
  createMerchant: (c) =>
    c.POST("/v1/merchants", { body: { name: "Acme Coffee Roasters", status: "active", metadata: { crm_id: "A-1" } } }),
  listMerchants: (c) => c.GET("/v1/merchants", { params: { query: { status: "active", limit: 10 } } }),
  getMerchant: (c) => c.GET("/v1/merchants/{id}", { params: { path: { id: ids.merchant } } }),
  updateMerchant: (c) =>
    c.PATCH("/v1/merchants/{id}", { params: { path: { id: ids.merchant } }, body: { status: "suspended" } }),
  getMerchantBalance: (c) => c.GET("/v1/merchants/{id}/balance", { params: { path: { id: ids.merchant } } }),
  getMerchantFeeSchedule: (c) => c.GET("/v1/merchants/{id}/fee_schedule", { params: { path: { id: ids.merchant } } }),
  setMerchantFeeSchedule: (c) =>
    c.POST("/v1/merchants/{id}/fee_schedule", {
      params: { path: { id: ids.merchant } },
      body: { override: { card: { percent_bps: 190, fixed: { USD: 20 } } } },
    }),
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
  createCashout: (c) =>
    c.POST("/v1/cashouts", {
      body: {
        merchant_id: ids.merchant,
        amount: 50000,
        currency: "EUR",
        destination: { type: "iban", iban: "DE89 3704 0044 0532 0130 00", account_holder: "Acme GmbH" },
        description: "Weekly payout",
      },
    }),
  getCashout: (c) => c.GET("/v1/cashouts/{id}", { params: { path: { id: ids.cashout } } }),
  getBalanceTransaction: (c) =>
    c.GET("/v1/balance_transactions/{id}", { params: { path: { id: ids.balanceTransaction } } }),
  listBalanceTransactions: (c) =>
    c.GET("/v1/balance_transactions", {
      params: { query: { merchant_id: ids.merchant, type: "charge", cashout_id: ids.cashout, limit: 10 } },
    }),
  listDisputes: (c) =>
    c.GET("/v1/disputes", { params: { query: { charge_id: ids.charge, status: "needs_response", limit: 10 } } }),
  getDispute: (c) => c.GET("/v1/disputes/{id}", { params: { path: { id: ids.dispute } } }),
  updateDispute: (c) =>
    c.POST("/v1/disputes/{id}", {
      params: { path: { id: ids.dispute } },
      body: { evidence: { product_description: "Roasted coffee beans, 1 kg", shipping_carrier: "DHL" }, submit: true },
    }),
  closeDispute: (c) => c.POST("/v1/disputes/{id}/close", { params: { path: { id: ids.dispute } } }),
  sandboxOpenDispute: (c) =>
    c.POST("/v1/sandbox/charges/{id}/dispute", {
      params: { path: { id: ids.charge } },
      body: { reason: "product_not_received" },
    }),
  sandboxResolveDispute: (c) =>
    c.POST("/v1/sandbox/disputes/{id}/resolve", { params: { path: { id: ids.dispute } }, body: { outcome: "won" } }),
  sandboxAnswerThreeDSecure: (c) =>
    c.POST("/v1/sandbox/charges/{id}/three_d_secure", {
      params: { path: { id: ids.charge } },
      body: { outcome: "complete" },
    }),
  listCashouts: (c) =>
    c.GET("/v1/cashouts", { params: { query: { merchant_id: ids.merchant, status: "pending", limit: 10 } } }),
  cancelCashout: (c) => c.POST("/v1/cashouts/{id}/cancel", { params: { path: { id: ids.cashout } } }),
  sandboxPayCashout: (c) => c.POST("/v1/sandbox/cashouts/{id}/pay", { params: { path: { id: ids.cashout } } }),
  sandboxFailCashout: (c) =>
    c.POST("/v1/sandbox/cashouts/{id}/fail", {
      params: { path: { id: ids.cashout } },
      body: { failure_code: "account_closed" },
    }),
  createPaymentLink: (c) =>
    c.POST("/v1/payment_links", {
      body: {
        merchant_id: ids.merchant,
        amount: 2500,
        currency: "USD",
        description: "Coffee subscription",
        payment_methods: ["card"],
        max_uses: 100,
        after_completion: { type: "redirect", url: "https://shop.example.com/thanks" },
      },
    }),
  getPaymentLink: (c) => c.GET("/v1/payment_links/{id}", { params: { path: { id: ids.paymentLink } } }),
  listPaymentLinks: (c) =>
    c.GET("/v1/payment_links", { params: { query: { merchant_id: ids.merchant, active: true, limit: 10 } } }),
  updatePaymentLink: (c) =>
    c.PATCH("/v1/payment_links/{id}", { params: { path: { id: ids.paymentLink } }, body: { active: false } }),
  payPaymentLink: (c) =>
    c.POST("/v1/payment_links/{id}/pay", { params: { path: { id: ids.paymentLink } }, body: payBody }),
  // Adyen's notifications are signed per item, not by a key; the mock checks their shape only (docs/mock.md).
  receiveAdyenNotifications: (c) =>
    c.POST("/v1/acquirers/adyen/notifications", {
      body: {
        live: "false",
        notificationItems: [
          {
            NotificationRequestItem: {
              eventCode: "AUTHORISATION",
              pspReference: "TST0000000000001ROHL",
              merchantReference: ids.charge,
              merchantAccountCode: "PaymentsPlatformECOM",
              success: "true",
              amount: { value: 5000, currency: "BRL" },
              additionalData: { hmacSignature: "AqXCqxiG3iljAJFHmzf1iyp303xVXc8SvFUmw/3Y3iI=" },
            },
          },
        ],
      },
      parseAs: "text",
    }),
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

let prism: RunningPrism | undefined;
let baseUrl = "";
/** operationIds that Prism answered, filled by the checking middleware. */
const exercised = new Set<string>();

/** A client whose every answer is checked against the contract on the way in. */
function checkedClient(): { client: PaymentsClient; checks: Array<ResponseCheck & { status: number }> } {
  const checks: Array<ResponseCheck & { status: number }> = [];
  // A 5xx from the mock would be a Prism bug, not a reason to wait: no retries.
  const client = createPaymentsClient({ baseUrl, apiKey: "key_test_4fQx9ZkT2mB7rLp1WcYd8sNa01234567", maxRetries: 0 });
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
  prism = await startPrism();
  baseUrl = prism.url;
}, 35_000);

afterAll(() => prism?.stop());

describe("the mock's default answers: every operation's first examples are its happy path", () => {
  // What QA gets without asking for a named example, and what the reference (/docs) shows first: the
  // first request example is a valid request, and the mock answers it with the first success example
  // (the two halves of one @opExample share its name).
  for (const op of OPERATIONS) {
    it(`${op.operationId}: the first request example is valid, and the mock answers it with the first ${
      firstSuccessExample(op)?.status ?? "2xx"
    } example`, async () => {
      const success = firstSuccessExample(op);
      expect(success, "every operation documents a success example").toBeDefined();
      const request = exampleRequest(op);
      const requestExample = firstRequestExampleName(op);
      if (requestExample !== undefined) {
        expect(contract.checkRequestBody(op.method, op.path, request.body)).toEqual([]);
        expect(requestExample, "the first request and success examples are halves of one example").toBe(success?.name);
      }
      const url = new URL(
        op.path.replace(/\{(\w+)\}/g, (_, name: string) => request.path[name] ?? ""),
        baseUrl,
      );
      const headers: Record<string, string> = {};
      if (!op.public) headers.Authorization = "Bearer key_test_4fQx9ZkT2mB7rLp1WcYd8sNa01234567";
      if (request.body !== undefined) headers["Content-Type"] = "application/json";
      const res = await fetch(url, {
        method: op.method.toUpperCase(),
        headers,
        ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
      });
      const text = await res.text();
      expect(res.status, text).toBe(success?.status);
      // As the mock serves it: the example's links (a payment link's page) on the mock's own address;
      // JSON, except the event stream's example: text/event-stream text.
      const served = rebaseExamples({ servers: contract.document.servers, example: success?.value }, baseUrl);
      const json = /json/i.test(res.headers.get("content-type") ?? "");
      expect(json ? JSON.parse(text) : text).toEqual(served.example);
    });
  }
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
    // The probes take no parameters; the public pay operation (below) a link id and a body.
    const publicOps = OPERATIONS.filter((op) => op.public && op.method === "get");
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

  it("answers the public pay operation without a key, and a keyed operation not", async () => {
    const res = await fetch(`${baseUrl}/v1/payment_links/${ids.paymentLink}/pay`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(payBody),
    });
    const check = await contract.checkFetchResponse("POST", "/v1/payment_links/{id}/pay", res);
    expect(res.status).toBe(201);
    expect(check.errors).toEqual([]);
    const keyless = await fetch(`${baseUrl}/v1/payment_links/${ids.paymentLink}`);
    expect(keyless.status).toBe(401);
  });

  it("refuses a request body the document does not allow (QA sees contract violations)", async () => {
    const auth = {
      Authorization: "Bearer key_test_4fQx9ZkT2mB7rLp1WcYd8sNa01234567",
      "Content-Type": "application/json",
    };
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
