import type { PaymentsClient } from "@payments/client";
import { unwrap } from "@payments/client";
import type { OPERATIONS } from "@payments/contract/operations";
import {
  CHALLENGE_CARD,
  cardBody,
  cardChargeBody,
  cardPayment,
  createCharge,
  createEvaluation,
  createFraudList,
  createFraudListItem,
  createMerchant,
  createPaymentLink,
  createPixCharge,
  createToken,
  createWebhookEndpoint,
  creditAvailable,
  freshCardNumber,
  insertEvent,
  pageTokenOf,
  REVIEW_CARD,
} from "../e2e/fixtures.ts";
import { notificationRequest, signedItem } from "./adyen-notifications.ts";
import type { TestServer } from "./server.ts";

// A valid request for every operation of the contract, made from fresh fixtures in the given
// environment: the scope matrix (e2e/scope-matrix.test.ts) and the suite the Prism mock and the server
// share (support/agreement.ts) both use them. An operation without a recipe fails both.

export type Recipe = (
  env: Env,
) => Promise<{ path: Record<string, string>; query?: Record<string, string>; body?: unknown }>;
export interface Env {
  server: TestServer;
  client: PaymentsClient;
  live: boolean;
}

/**
 * The environment inside a sandbox on demand (`id`, `client` a client of one of its keys), which a first
 * request opens: the recipes that make their fixture through the server's domain or read its store make
 * it in the sandbox's, not the default sandbox's.
 */
export async function sandboxEnv(server: TestServer, id: string, client: PaymentsClient): Promise<Env> {
  await client.GET("/v1/merchants");
  const opened = await server.running.sandboxes.inspect(id);
  if (!opened) throw new Error(`sandbox ${id} is not open`);
  return {
    server: { ...server, running: { ...server.running, domain: opened.domain, store: opened.store } },
    client,
    live: false,
  };
}

/** How to make a valid request for each operation; ids come from fresh fixtures in the given environment. */
export const RECIPES: Record<(typeof OPERATIONS)[number]["operationId"], Recipe> = {
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
  getMerchantFeeSchedule: async ({ client }) => ({ path: { id: (await createMerchant(client)).id } }),
  setMerchantFeeSchedule: async ({ client }) => ({
    path: { id: (await createMerchant(client)).id },
    body: { override: { card: { percent_bps: 190, fixed: { USD: 20 } } } },
  }),
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
  sandboxAnswerThreeDSecure: async ({ client }) => ({
    path: { id: (await createCharge(client, { card: CHALLENGE_CARD })).id },
    body: { outcome: "complete" },
  }),
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
  // Not following: the stream sends what there is and ends, so a generic caller can read it whole.
  streamEvents: async () => ({ path: {}, query: { follow: "false" } }),
  listRequestLog: async () => ({ path: {} }),
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
  getLiveness: async () => ({ path: {} }),
  getReadiness: async () => ({ path: {} }),
  createCashout: async (env) => ({ path: {}, body: await cashoutBody(env) }),
  getCashout: async (env) => ({ path: { id: await cashoutId(env) } }),
  listCashouts: async () => ({ path: {} }),
  getBalanceTransaction: async (env) => ({ path: { id: await balanceTransactionId(env) } }),
  listBalanceTransactions: async () => ({ path: {} }),
  cancelCashout: async (env) => ({ path: { id: await cashoutId(env) } }),
  sandboxPayCashout: async (env) => ({ path: { id: await cashoutId(env) } }),
  sandboxFailCashout: async (env) => ({ path: { id: await cashoutId(env) }, body: {} }),
  getDispute: async (env) => ({ path: { id: await disputeId(env) } }),
  listDisputes: async () => ({ path: {} }),
  updateDispute: async (env) => ({
    path: { id: await disputeId(env) },
    body: { evidence: { customer_name: "Matrix customer" } },
  }),
  closeDispute: async (env) => ({ path: { id: await disputeId(env) } }),
  sandboxOpenDispute: async ({ client }) => ({
    path: { id: (await createCharge(client, { card: freshCardNumber() })).id },
    body: {},
  }),
  sandboxResolveDispute: async (env) => ({ path: { id: await disputeId(env) }, body: { outcome: "won" } }),
  createPaymentLink: async ({ client }) => ({
    path: {},
    body: { merchant_id: (await createMerchant(client)).id, amount: 2500, currency: "USD", description: "Matrix" },
  }),
  getPaymentLink: async ({ client }) => ({ path: { id: (await createPaymentLink(client)).id } }),
  listPaymentLinks: async () => ({ path: {} }),
  updatePaymentLink: async ({ client }) => ({
    path: { id: (await createPaymentLink(client)).id },
    body: { description: "Renamed" },
  }),
  // Sandboxes on demand: each recipe that needs one makes a fresh sandbox in the caller's environment.
  createSandbox: async () => ({ path: {}, body: { name: "matrix" } }),
  listSandboxes: async () => ({ path: {} }),
  getSandbox: async ({ client }) => ({ path: { id: await sandboxId(client) } }),
  deleteSandbox: async ({ client }) => ({ path: { id: await sandboxId(client) } }),
  getSandboxClock: async () => ({ path: {} }),
  // A minute: the matrix's other sandbox objects barely notice.
  advanceSandboxClock: async () => ({ path: {}, body: { seconds: 60 } }),
  // Back to real time (with no offset, nothing changes).
  resetSandboxClock: async () => ({ path: {} }),
  // Adyen's notification for a fresh pending pix charge, signed with the test server's HMAC key: no service
  // key is involved, a key of any scope changes nothing, and the charge is captured once.
  receiveAdyenNotifications: async ({ client, live }) => {
    const charge = await createPixCharge(client);
    const item = signedItem({ eventCode: "AUTHORISATION", merchantReference: charge.id });
    return { path: {}, body: notificationRequest([item], live) };
  },
  payPaymentLink: async ({ client, server }) => {
    const link = await createPaymentLink(client);
    return {
      path: { id: link.id },
      body: { page_token: await pageTokenOf(server, link.id), payment_method: cardPayment() },
    };
  },
};

/**
 * A valid cashout body: a fresh merchant with 1,000 available. Production captures wait for settlement,
 * so the funds are put straight into the balance, in whichever environment the recipe runs.
 */
async function cashoutBody({ server, client }: Env) {
  const merchant = await createMerchant(client);
  await creditAvailable(server, merchant, 1000);
  return {
    merchant_id: merchant.id,
    amount: 100,
    currency: "USD",
    destination: {
      type: "us_bank_account" as const,
      routing_number: "110000000",
      account_number: "000123456789",
      account_holder: "Matrix Inc.",
    },
  };
}

/** A pending cashout in the recipe's environment. */
async function cashoutId(env: Env): Promise<string> {
  const { id } = await env.server.running.domain.cashouts.create(
    { keyId: "kid_matrix", livemode: env.live, scopes: ["*"], keyPrefix: "key_test_matrix", requestId: "req_matrix" },
    await cashoutBody(env),
  );
  return id;
}

/**
 * A chargeback on a fresh captured charge in the recipe's environment, opened through the domain: in
 * production only the acquirer opens disputes (the sandbox helper answers 404 there).
 */
async function disputeId(env: Env): Promise<string> {
  const charge = await createCharge(env.client, { card: freshCardNumber() });
  const { id } = await env.server.running.domain.disputes.open(null, env.live, charge.id, {});
  return id;
}

/** A balance transaction of the environment: a new cashout's own. */
async function balanceTransactionId(env: Env): Promise<string> {
  const source = await cashoutId(env);
  const found = await env.server.running.store.findOne("balance_transactions", { source_id: source });
  if (!found) throw new Error(`no balance transaction for cashout ${source}`);
  return found.id;
}

async function sandboxId(client: PaymentsClient): Promise<string> {
  return unwrap(await client.POST("/v1/sandboxes", { body: { name: "fixture" } })).id;
}

async function keyId(server: TestServer, live: boolean): Promise<string> {
  const { key } = await server.running.domain.serviceKeys.issue(live, { name: "fixture", scopes: ["fraud"] });
  return key.id;
}

/**
 * Operations whose success answer is text, not JSON: a stream of server-sent events, and Adyen's
 * `[accepted]` (receiveAdyenNotifications).
 */
const STREAMING = new Set(["streamEvents", "receiveAdyenNotifications"]);

export function call(
  client: PaymentsClient,
  op: (typeof OPERATIONS)[number],
  path: Record<string, string>,
  body?: unknown,
  header?: Record<string, string>,
  query?: Record<string, string>,
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
  return fn(op.path, {
    params: { path, ...(header ? { header } : {}), ...(query ? { query } : {}) },
    ...(body === undefined ? {} : { body }),
    ...(STREAMING.has(op.operationId) ? { parseAs: "text" } : {}),
  });
}
