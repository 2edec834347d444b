import { randomBytes } from "node:crypto";
import type { Scope } from "@payments/contract/operations";
import {
  type createLogger,
  IN_MEMORY,
  loadConfig,
  type RunningServer,
  startServer,
  type WebhookOverrides,
} from "@payments/server";
import { MongoClient } from "mongodb";
import { inject } from "vitest";

// A real server on a random loopback port with response validation on: what the e2e, contract and
// benchmark runs talk to. Each call gets its own store, so suites can run in parallel without seeing
// each other's data: an in-memory SQLite store, or, when MONGODB_URI is set in the environment (the
// GitHub Actions workflow, a developer with a replica set), a MongoDB database of its own with a
// unique name, dropped again by close().
//
// Webhook endpoint host names resolve through `loopbackResolver` unless a test passes its own: tests
// send traffic only to loopback, so no test ever asks a DNS server, and an endpoint on any other name
// (a contract example's `acme.example`) fails its deliveries with `dns_error` instead of reaching out.

/** Resolves `localhost` (and names under it) to the loopback addresses and no other name. */
export const loopbackResolver: NonNullable<WebhookOverrides["resolve"]> = async (hostname) => {
  if (hostname === "localhost" || hostname.endsWith(".localhost")) {
    return [
      { address: "127.0.0.1", family: 4 },
      { address: "::1", family: 6 },
    ];
  }
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
};

/** A logger as the server makes them (createLogger). */
export type Logger = ReturnType<typeof createLogger>;

export interface TestServer {
  url: string;
  running: RunningServer;
  /** A sandbox key with scope `*` (the one the first start creates). */
  sandboxKey: string;
  /** Creates a key with the given scopes; `live` makes a production key. */
  key(scopes: Scope[], options?: { live?: boolean; name?: string }): Promise<string>;
  /**
   * Another server instance on this one's store (as a second worker or host would be), on a port of its
   * own; close it before this one (this one's close drops a MongoDB test database). The store must be one
   * two instances can share: a DATA_DIR on disk, or MongoDB.
   */
  another?: () => Promise<RunningServer>;
  close(): Promise<void>;
}

/** The HMAC key the test server verifies Adyen's notifications with (ADYEN_HMAC_KEYS). */
export const TEST_ADYEN_HMAC_KEY = "BB593909878B2D954A02AC75AF08D975CBA88DD258BF46FD87877CBDF1141D40";

/**
 * The acquirer the suites' servers use: `adyen` in the Adyen e2e run (test/vitest.adyen.config.ts: the
 * stand-in behind Prism, for production and the sandbox), else the simulator. A test that asserts the
 * simulator's own behaviour skips itself under `adyen`, saying why.
 */
const ADYEN_E2E = (() => {
  // Outside a vitest worker (the benchmark's tsx, a globalSetup) there is nothing provided.
  try {
    return inject("adyenE2E");
  } catch {
    return undefined;
  }
})();
export const ACQUIRER: "adyen" | "simulator" = ADYEN_E2E ? "adyen" : "simulator";

/** The Adyen run's stand-in itself (its test side door: adyen-stand-in/stand-in.ts takeNotificationsAt), or undefined. */
export const ADYEN_STAND_IN_URL: string | undefined = ADYEN_E2E?.standInUrl;

/** The settings that point a test server's acquirers at the run's Adyen stand-in (none outside that run). */
function adyenEnv(): Record<string, string> {
  if (!ADYEN_E2E) return {};
  return {
    PRODUCTION_ACQUIRER: "adyen",
    SANDBOX_ACQUIRER: "adyen",
    ADYEN_ENVIRONMENT: "test",
    ADYEN_API_KEY: ADYEN_E2E.apiKey,
    ADYEN_PAYOUT_REVIEWER_API_KEY: ADYEN_E2E.payoutReviewerApiKey,
    ADYEN_MERCHANT_ACCOUNT: ADYEN_E2E.merchantAccount,
    ADYEN_HMAC_KEYS: ADYEN_E2E.hmacKey,
    ADYEN_CHECKOUT_URL: ADYEN_E2E.checkoutUrl,
    ADYEN_PAYOUT_URL: ADYEN_E2E.payoutUrl,
    ADYEN_DISPUTES_URL: ADYEN_E2E.disputesUrl,
  };
}

/** The MongoDB deployment the suites run on instead of SQLite, when the environment names one. */
export const MONGODB_URI = process.env.MONGODB_URI || undefined;

/**
 * `now`: the server's clock (default: the real one); tests that need time to pass (review windows,
 * velocity windows) pass a clock they move (clock.ts). `webhooks`: the webhook sender and resolver to
 * use. `logger`: where the server logs (default: LOG_LEVEL silent, nowhere).
 */
export async function startTestServer(
  env: Record<string, string> = {},
  options: { now?: () => Date; webhooks?: WebhookOverrides; logger?: Logger } = {},
): Promise<TestServer> {
  const mongo = MONGODB_URI ? { MONGODB_URI, MONGODB_DB: `test_${randomBytes(12).toString("hex")}` } : {};
  const config = loadConfig({
    NODE_ENV: "test",
    HOST: "127.0.0.1",
    PORT: "0",
    DATA_DIR: IN_MEMORY,
    LOG_LEVEL: "silent",
    VALIDATE_RESPONSES: "true",
    // Suites send hundreds of requests a second with one key; the rate-limit tests set their own limits.
    RATE_LIMIT_TEST_PER_SECOND: "1000000",
    RATE_LIMIT_LIVE_PER_SECOND: "1000000",
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: "1000000",
    RATE_LIMIT_PAYMENT_LINK_PER_MINUTE: "1000000",
    RATE_LIMIT_PAYMENT_ADDRESS_PER_MINUTE: "1000000",
    // The suites take production payments too: through the simulator, named as production's acquirer
    // (unset, production money operations answer 503 acquirer_not_configured).
    PRODUCTION_ACQUIRER: "simulator",
    // Adyen's notification endpoint is on, with a key the suites sign with (recipes, test/adyen/).
    ADYEN_HMAC_KEYS: TEST_ADYEN_HMAC_KEY,
    ...adyenEnv(),
    ...mongo,
    ...env,
  });
  const running = await startServer({
    config,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.now ? { now: options.now } : {}),
    webhooks: { resolve: loopbackResolver, ...options.webhooks },
  });
  if (!running.bootstrapSecret) throw new Error("a fresh in-memory store must create the sandbox key");
  return {
    url: running.url,
    running,
    sandboxKey: running.bootstrapSecret,
    async key(scopes, options = {}) {
      const { secret } = await running.domain.serviceKeys.issue(options.live ?? false, {
        name: options.name ?? `test ${scopes.join(",")}`,
        scopes,
      });
      return secret;
    },
    another: () =>
      startServer({
        config,
        ...(options.logger ? { logger: options.logger } : {}),
        ...(options.now ? { now: options.now } : {}),
        webhooks: { resolve: loopbackResolver, ...options.webhooks },
      }),
    async close() {
      await running.close();
      if (config.MONGODB_URI) await dropDatabase(config.MONGODB_URI, config.MONGODB_DB);
    },
  };
}

async function dropDatabase(uri: string, name: string): Promise<void> {
  const client = new MongoClient(uri);
  try {
    await client.db(name).dropDatabase();
  } finally {
    await client.close();
  }
}
