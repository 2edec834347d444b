import { createPaymentsClient, type PaymentsClient, unwrap } from "@payments/client";
import type { Scope } from "@payments/contract/operations";
import { idempotencyRecordId, newId, type WebhookOverrides } from "@payments/server";
import { afterAll, beforeAll } from "vitest";
import type { TestClock } from "../support/clock.ts";
import { eventually } from "../support/eventually.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

export const VISA = "4242424242424242";
export const MASTERCARD = "5555555555554444";
/** Sandbox test card that the fraud engine always sends to review (authorized and held). */
export const REVIEW_CARD = "4000000000009235";
/** The 3-D Secure test card whose issuer always asks for a challenge (docs/three-d-secure.md). */
export const CHALLENGE_CARD = "4000000000003220";

export function clientFor(server: TestServer, apiKey: string): PaymentsClient {
  // No retries: a test must see the first answer.
  return createPaymentsClient({ baseUrl: server.url, apiKey, maxRetries: 0 });
}

/**
 * A sandbox on demand (POST /v1/sandboxes) made with a key of the account (`admin`): its id, its first
 * key's secret (scope `*`, shown once) and a client of that key. `made` is the whole answer.
 */
export async function createSandbox(server: TestServer, admin: PaymentsClient, name: string) {
  const made = unwrap(await admin.POST("/v1/sandboxes", { body: { name } }));
  return { id: made.id, secret: made.key.secret, client: clientFor(server, made.key.secret), made };
}

export interface ServerOptions {
  /** The server's clock, which the tests move (default: the real one). */
  clock?: TestClock;
  webhooks?: WebhookOverrides;
}

export interface ServerFixture {
  readonly server: TestServer;
  /** A client with the sandbox key of scope `*` the server's first start made. */
  readonly client: PaymentsClient;
}

function start(env: Record<string, string>, options: ServerOptions): Promise<TestServer> {
  return startTestServer(env, {
    ...(options.clock ? { now: options.clock.now } : {}),
    ...(options.webhooks ? { webhooks: options.webhooks } : {}),
  });
}

/**
 * The server of the enclosing describe (or file): started before its first test with `env` (on top of
 * startTestServer's test settings), closed after its last. `server` and `client` can be taken apart at
 * once (`const { server, client } = useServer()`): each forwards to the server started for the tests,
 * and says so if it is read outside them.
 */
export function useServer(env: Record<string, string> = {}, options: ServerOptions = {}): ServerFixture {
  let current: ServerFixture | undefined;
  beforeAll(async () => {
    const server = await start(env, options);
    current = { server, client: clientFor(server, server.sandboxKey) };
  });
  afterAll(async () => {
    await current?.server.close();
    current = undefined;
  });
  const started = (): ServerFixture => {
    if (!current) throw new Error("useServer's server is read outside the tests of the describe that declares it");
    return current;
  };
  return { server: forwarding(() => started().server), client: forwarding(() => started().client) };
}

/** An object that reads every property from `target()` at the moment it is read. */
function forwarding<T extends object>(target: () => T): T {
  return new Proxy({} as T, { get: (_, property) => Reflect.get(target(), property) });
}

/** Runs `test` against a server of its own with `env`, and closes it afterwards, whatever happens. */
export async function withServer<T>(
  env: Record<string, string>,
  test: (fixture: ServerFixture) => Promise<T>,
  options: ServerOptions = {},
): Promise<T> {
  const server = await start(env, options);
  try {
    return await test({ server, client: clientFor(server, server.sandboxKey) });
  } finally {
    await server.close();
  }
}

/** A sandbox key with `scopes`, created through the API (createServiceKey): its id and its secret. */
export async function createServiceKey(client: PaymentsClient, scopes: Scope[], name = `test ${scopes.join(",")}`) {
  const key = unwrap(await client.POST("/v1/service_keys", { body: { name, scopes } }));
  return { id: key.id, secret: key.secret };
}

/** The id of a key of the client's environment, found by its secret's prefix in the key list (listServiceKeys). */
export async function keyIdOf(client: PaymentsClient, secret: string): Promise<string> {
  const keys = unwrap(await client.GET("/v1/service_keys", { params: { query: { limit: 100 } } })).data;
  const key = keys.find((k) => k.prefix === secret.slice(0, k.prefix.length));
  if (!key) throw new Error(`no key with the prefix of ${secret.slice(0, 13)}… among the newest 100`);
  return key.id;
}

export const cardBody = (card = VISA) => ({ card, holder: "Ada Lovelace", exp_month: 12, exp_year: 2031, cvc: "123" });

export async function createMerchant(client: PaymentsClient, name = "Acme Coffee") {
  return unwrap(await client.POST("/v1/merchants", { body: { name } }));
}

export async function createToken(client: PaymentsClient, card = VISA) {
  return unwrap(await client.POST("/v1/tokens", { body: cardBody(card) }));
}

/**
 * A Visa number no test card uses (the simulator approves it), different on every call: a card of its
 * own for a fixture that must be captured however many charges a suite makes, clear of the fraud
 * engine's velocity rules, which count charges per card.
 */
export function freshCardNumber(): string {
  const digits = [4, ...Array.from({ length: 14 }, () => Math.floor(Math.random() * 10))];
  // The Luhn check digit: double every second digit from the right of the 15 (the first doubled is the last).
  const sum = digits
    .toReversed()
    .map((d, i) => (i % 2 === 0 ? (d * 2 > 9 ? d * 2 - 9 : d * 2) : d))
    .reduce((a, b) => a + b, 0);
  return [...digits, (10 - (sum % 10)) % 10].join("");
}

/** A valid card-charge body: a fresh merchant and token in the client's environment. */
export async function cardChargeBody(client: PaymentsClient, amount = 10_000, currency = "USD") {
  const merchant = await createMerchant(client);
  const token = await createToken(client);
  return {
    merchant_id: merchant.id,
    amount,
    currency,
    payment_method: { type: "card" as const, token: token.id },
  };
}

export async function createCharge(
  client: PaymentsClient,
  options: { amount?: number; currency?: string; capture?: boolean; card?: string } = {},
) {
  const body = await cardChargeBody(client, options.amount, options.currency);
  if (options.card) body.payment_method.token = (await createToken(client, options.card)).id;
  return unwrap(await client.POST("/v1/charges", { body: { ...body, capture: options.capture ?? true } }));
}

export async function createPixCharge(client: PaymentsClient, amount = 15_000) {
  const merchant = await createMerchant(client);
  return unwrap(
    await client.POST("/v1/charges", {
      body: { merchant_id: merchant.id, amount, currency: "BRL", payment_method: { type: "pix" } },
    }),
  );
}

export async function createEvaluation(client: PaymentsClient) {
  return unwrap(await client.POST("/v1/fraud/evaluations", { body: { amount: 2500, currency: "USD" } }));
}

export async function createFraudList(client: PaymentsClient) {
  return unwrap(
    await client.POST("/v1/fraud/lists", { body: { name: "Fixture list", kind: "email", action: "block" } }),
  );
}

export async function createFraudListItem(client: PaymentsClient) {
  const list = await createFraudList(client);
  return unwrap(
    await client.POST("/v1/fraud/lists/{id}/items", {
      params: { path: { id: list.id } },
      body: { value: "fixture@example.com" },
    }),
  );
}

/** The types of the events about one charge, newest first. */
export async function eventTypesOf(client: PaymentsClient, txId: string): Promise<string[]> {
  const page = await client.GET("/v1/events", { params: { query: { limit: 100 } } });
  return (page.data?.data ?? []).filter((e) => "tx_id" in e && e.tx_id === txId).map((e) => e.type);
}

/** Events have no create operation (charges make them); tests put one in the store directly. */
export async function insertEvent(server: TestServer, livemode = false) {
  const event = {
    id: newId("evt"),
    livemode,
    created_at: new Date().toISOString(),
    type: "fraud.evaluated" as const,
    payload: {
      tx_id: "tx_9Lm2QwErTy7UiOp3AsDf5GhJ",
      score: 96,
      decision: "block",
      signals: ["highrisk_bin", "vpn_detected"],
    },
  };
  await server.running.store.insert("events", event);
  return event;
}

/**
 * The newest 100 entries of the request log (GET /v1/request_log), once the request `requestId` is among
 * them: records are written in batches, a moment after the answer, and in order, so every earlier
 * request's record is in by then too.
 */
export function requestLogThrough(client: PaymentsClient, requestId: string) {
  return eventually(
    `${requestId} in the request log`,
    async () => unwrap(await client.GET("/v1/request_log", { params: { query: { limit: 100 } } })).data,
    (entries) => entries.some((e) => e.id === requestId),
  );
}

// What the API cannot show, read from the store: the record an Idempotency-Key left (what it keeps, and
// what it withholds) and the vault's audit trail.

/** The sandbox's stored record of an Idempotency-Key; `namespace` for a public operation's own key space. */
export function storedIdempotencyRecord(server: TestServer, key: string, namespace?: string) {
  return server.running.store.get("idempotency", idempotencyRecordId(false, key, namespace));
}

/** The console sessions the store holds for a key (the API shows only that they stop working). */
export function storedConsoleSessionsOf(server: TestServer, keyId: string) {
  return server.running.store.findAll("console_sessions", { key_id: keyId }, 10);
}

/** The audit records about one object (a token's reveals). */
export function auditRecordsOf(server: TestServer, objectId: string) {
  return server.running.store.findAll("audit_log", { object_id: objectId });
}

/**
 * Puts `amount` into a merchant's available balance, in either environment, as a store write: production
 * captures reach `available` only at settlement, and a cashout test needs funds at once.
 */
export async function creditAvailable(
  server: TestServer,
  merchant: { id: string; livemode: boolean },
  amount: number,
  currency = "USD",
) {
  const at = new Date().toISOString();
  await server.running.store.insert("balances", {
    id: `${merchant.id}:${currency}`,
    livemode: merchant.livemode,
    created_at: at,
    updated_at: at,
    merchant_id: merchant.id,
    currency,
    available: amount,
    pending: 0,
  });
}

/** A raw fetch answer's JSON, for tests that bypass the typed client on purpose. */
// biome-ignore lint/suspicious/noExplicitAny: assertions below check the shape
export const json = (res: Response): Promise<any> => res.json();

/**
 * A webhook endpoint in the client's environment that receives no fanned-out events (it subscribes to
 * `webhook_endpoint.test` only, which only POST /v1/webhook_endpoints/{id}/test sends): a sandbox one on
 * a closed loopback port, a production one on a name the test servers never resolve (no traffic).
 */
export async function createWebhookEndpoint(client: PaymentsClient, live = false) {
  return unwrap(
    await client.POST("/v1/webhook_endpoints", {
      body: {
        url: live ? "https://hooks.example.com/matrix" : "http://127.0.0.1:9/matrix",
        enabled_events: ["webhook_endpoint.test"],
      },
    }),
  );
}

/** A merchant whose available balance in `currency` is `amount` (one captured card charge; the sandbox settles at once). */
export async function fundedMerchant(client: PaymentsClient, amount: number, currency = "USD") {
  const body = await cardChargeBody(client, amount, currency);
  const charge = unwrap(await client.POST("/v1/charges", { body }));
  if (charge.status !== "captured") throw new Error(`funding charge is ${charge.status}`);
  return { id: body.merchant_id, chargeId: charge.id };
}

/** A payment link of a fresh merchant; `body` overrides the defaults (USD 25.00, card only). */
export async function createPaymentLink(
  client: PaymentsClient,
  body: Partial<{
    merchant_id: string;
    amount: number;
    currency: string;
    description: string;
    payment_methods: ("card" | "pix" | "boleto" | "oxxo" | "spei" | "sepa_debit")[];
    max_uses: number;
    expires_at: string;
    after_completion: { type: "message"; message: string } | { type: "redirect"; url: string };
  }> = {},
) {
  const merchantId = body.merchant_id ?? (await createMerchant(client, "Acme Coffee Roasters")).id;
  return unwrap(
    await client.POST("/v1/payment_links", {
      body: { amount: 2500, currency: "USD", description: "Coffee subscription", ...body, merchant_id: merchantId },
    }),
  );
}

/** The page token of a link's hosted page, as a payer's browser gets it (GET /pay/{id}, no key). */
export async function pageTokenOf(server: TestServer, linkId: string): Promise<string> {
  const res = await fetch(`${server.url}/pay/${linkId}`);
  const html = await res.text();
  const token = /data-page-token="([^"]+)"/.exec(html)?.[1];
  if (!token) throw new Error(`no page token on /pay/${linkId} (status ${res.status})`);
  return token;
}

export const cardPayment = (number = VISA) => ({
  type: "card" as const,
  number,
  exp_month: 12,
  exp_year: 2031,
  cvc: "123",
  holder: "Ada Lovelace",
});
