import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import type { DomainSettings } from "./domain/index.ts";
import { type MoneyRules, parseCurrencyList } from "./domain/kernel/money.ts";
import { type FeeSchedule, scheduleProblem } from "./domain/ledger/fees.ts";
import { DEFAULT_LIVE_SCHEDULE, DEFAULT_SANDBOX_SCHEDULE, parseSchedule } from "./domain/webhooks/schedule.ts";
import { errorCode, messageOf } from "./guards.ts";
import type { RateLimitSettings } from "./http/rate-limits.ts";

// The one configuration schema: every setting comes from the environment, is validated here at start-up and
// documented in .env.example and docs/operating.md "Configuration". Nothing else reads process.env.

const bool = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");
// Whole numbers in decimal digits only: an empty value (`PORT=`) is an error, not 0 (which for PORT
// would mean "any free port"), and neither "1e3" nor " 80" nor "0x50" passes.
const int = (min: number, max: number) =>
  z
    .string()
    .regex(/^[0-9]+$/, "must be a whole number written in digits")
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
/** A retry schedule: comma-separated whole seconds (domain/webhooks/schedule.ts). */
const schedule = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .superRefine((list, ctx) => {
      try {
        parseSchedule(list);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: messageOf(err) });
      }
    });

export const ConfigSchema = z
  .object({
    NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
    PORT: int(0, 65535).default(3000),
    HOST: z.string().min(1).default("127.0.0.1"),
    /** The public base address, used in `url` fields and the OpenAPI `servers` entry. */
    BASE_URL: z.url().optional(),
    DATA_DIR: z.string().min(1).default("./data"),
    /** Unset: the embedded SQLite store under DATA_DIR. Set: MongoDB (a replica set; money changes use transactions). */
    MONGODB_URI: z.string().min(1).optional(),
    MONGODB_DB: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,63}$/)
      .default("payments"),
    /** 32-byte master key (base64 or hex) that wraps each token's data key. Required in production. */
    VAULT_MASTER_KEY: z.string().min(1).optional(),
    /** 32-byte key (base64 or hex) for card fingerprints; must differ from the master key. Required in production. */
    VAULT_FINGERPRINT_KEY: z.string().min(1).optional(),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    /** Validate every response against the contract (default: on except in production). */
    VALIDATE_RESPONSES: bool.optional(),
    /** Largest accepted request body, in bytes. */
    BODY_LIMIT_BYTES: int(1024, 10 * 1024 * 1024).default(100 * 1024),
    /** How long an Idempotency-Key is remembered (24 h by default, as IdempotencyKeyHeader documents). */
    IDEMPOTENCY_TTL_SECONDS: int(60, 7 * 24 * 3600).default(24 * 3600),
    /**
     * How long a request holding an Idempotency-Key blocks retries with that key (409) before a retry may
     * take it over, on the assumption that its instance died. Longer than any request takes.
     */
    IDEMPOTENCY_LOCK_SECONDS: int(1, 3600).default(60),
    /** Whether the request log (for the console) is written to the store. */
    REQUEST_LOG: bool.default(true),
    /** How many days request-log records are kept; older ones are deleted by a background job. */
    REQUEST_LOG_RETENTION_DAYS: int(1, 3650).default(30),
    /**
     * How many days events are kept (GET /v1/events, the event stream, redelivery), on their environment's
     * clock; older ones are deleted by the housekeeping sweep (Stripe keeps 30 days). An event whose
     * deliveries are not yet made is kept until they are.
     */
    EVENT_RETENTION_DAYS: int(1, 3650).default(30),
    /** Requests per second one production key may make (429 beyond; Stripe allows about 100). */
    RATE_LIMIT_LIVE_PER_SECOND: int(1, 1_000_000).default(100),
    /** Requests per second one sandbox key may make (Stripe allows about 25). */
    RATE_LIMIT_TEST_PER_SECOND: int(1, 1_000_000).default(25),
    /**
     * How many keys' worth of requests per second all the keys of one environment may make together (its
     * per-key limit times this: 100 a second in the sandbox, 400 in production by default). A `*` key can
     * make keys, each with its own per-key quota; this ceiling keeps minting keys from multiplying them.
     */
    RATE_LIMIT_ENVIRONMENT_KEYS: int(1, 1_000_000).default(4),
    /** Requests per minute one client address may make without a valid key (bad keys, no key). */
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: int(1, 1_000_000).default(60),
    /**
     * Express's `trust proxy`: which proxies' X-Forwarded-For to believe for the client address (rate
     * limits per address). `false` (default: the connection's address), `true`, a hop count, or
     * addresses/subnets such as `loopback` or `10.0.0.0/8`.
     */
    TRUST_PROXY: z
      .string()
      .min(1)
      .default("false")
      .transform((v): boolean | number | string =>
        v === "false" ? false : v === "true" ? true : /^\d+$/.test(v) ? Number(v) : v,
      ),
    /** A request must arrive whole (headers and body) within this many seconds, or the connection is closed. */
    REQUEST_TIMEOUT_SECONDS: int(1, 3600).default(30),
    /** The request headers must arrive within this many seconds. */
    HEADERS_TIMEOUT_SECONDS: int(1, 3600).default(10),
    /** ISO 4217 codes the platform accepts, comma-separated. */
    SUPPORTED_CURRENCIES: z
      .string()
      .default("USD,EUR,GBP,BRL,MXN,JPY,KWD,CAD,AUD,CHF")
      .superRefine((list, ctx) => {
        try {
          parseCurrencyList(list);
        } catch (err) {
          ctx.addIssue({ code: "custom", message: messageOf(err) });
        }
      }),
    /** The largest amount of one charge, in major units of its currency (so JPY 999999, USD 999999.00). */
    MAX_AMOUNT: int(1, 1_000_000_000).default(999_999),
    /** How long production captures stay `pending` before they are `available`. */
    SETTLEMENT_DELAY_SECONDS: int(0, 30 * 86400).default(2 * 86400),
    /**
     * The same for the sandbox: 0 (the default) makes captured money available at once; a delay keeps it
     * `pending` until the sandbox clock reaches it (docs/sandbox-clock.md "Settlement in the sandbox").
     */
    SANDBOX_SETTLEMENT_DELAY_SECONDS: int(0, 30 * 86400).default(0),
    /**
     * Sandboxes on demand (POST /v1/sandboxes, spec/resources/sandboxes.tsp): how many one store may hold;
     * one more answers 409 `sandbox_limit_reached`.
     */
    SANDBOX_LIMIT: int(1, 10_000).default(100),
    /**
     * How long a sandbox on demand's store stays open in this process after its last request; its
     * background jobs and webhook deliveries run while it is open (server/src/sandboxes/host.ts).
     */
    SANDBOX_IDLE_SECONDS: int(1, 86400).default(900),
    /** How often the background jobs run: expiring unpaid local payments, settling pending funds, moving cashouts. */
    JOBS_INTERVAL_SECONDS: int(1, 86400).default(60),
    /**
     * The platform's fees, per payment method: a JSON object such as
     * {"card":{"percent_bps":290,"fixed":{"USD":30}}} (2.9 % + USD 0.30 per card capture). Default `{}`:
     * no fees. A charge keeps the rate in force when it was made (docs/money.md "Fees").
     */
    FEE_SCHEDULE: z
      .string()
      .default("{}")
      .superRefine((text, ctx) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          ctx.addIssue({
            code: "custom",
            message: 'must be JSON, e.g. {"card":{"percent_bps":290,"fixed":{"USD":30}}}',
          });
          return;
        }
        const problem = scheduleProblem(parsed);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      }),
    /**
     * The dispute fee, per currency in minor units, as a JSON object such as {"USD":1500,"EUR":1500}: taken
     * from the merchant's balance with a chargeback's amount, and kept whatever the outcome
     * (docs/disputes.md "Money"). A currency not listed pays none; default `{}`: no dispute fee.
     */
    DISPUTE_FEES: z
      .string()
      .default("{}")
      .superRefine((text, ctx) => {
        const problem = disputeFeesProblem(text);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      }),
    /** How long a merchant has to submit evidence on a dispute (its `evidence_due_by`); default 7 days. */
    DISPUTE_EVIDENCE_SECONDS: int(60, 90 * 86400).default(7 * 86400),
    /** How long a cashout stays `pending` (and can be canceled) before the payout job sends it. */
    CASHOUT_PENDING_SECONDS: int(0, 30 * 86400).default(3600),
    /** How long after sending a cashout the payout job asks the payout rail whether it was paid. */
    CASHOUT_TRANSIT_SECONDS: int(1, 30 * 86400).default(86400),
    /**
     * How long a card charge waits in `requires_action` for the payer's 3-D Secure answer before the
     * expiry job expires it (docs/three-d-secure.md "Expiry"); the sandbox clock moves it too.
     */
    THREE_D_SECURE_EXPIRY_SECONDS: int(60, 7 * 86400).default(3600),
    /** How long the token in a hosted payment page stays valid (a payer must pay within it, or reload). */
    PAYMENT_PAGE_TOKEN_TTL_SECONDS: int(60, 86400).default(3600),
    /** Payments per minute one payment link's public pay operation accepts, from all payers together. */
    RATE_LIMIT_PAYMENT_LINK_PER_MINUTE: int(1, 1_000_000).default(120),
    /** Payment attempts per minute one client address may make through payment links' public pay operation. */
    RATE_LIMIT_PAYMENT_ADDRESS_PER_MINUTE: int(1, 1_000_000).default(10),
    /**
     * Event streams (GET /v1/events/stream) one key may hold open at once, across every worker and
     * instance on the store (slots leased in the store: domain/webhooks/stream-leases.ts); one more is
     * refused with 429. Each open stream is woken by commits that record events.
     */
    EVENT_STREAMS_PER_KEY: int(1, 1000).default(5),
    /** Whether this instance runs the webhook dispatcher (any number of instances may). */
    WEBHOOK_DISPATCHER: bool.default(true),
    /** One delivery attempt's time limit: a 2xx must arrive within it. */
    WEBHOOK_TIMEOUT_SECONDS: int(1, 60).default(10),
    /** Seconds before each automatic retry in production (±20 % jitter): ~3 days by default. */
    WEBHOOK_RETRY_SCHEDULE: schedule(DEFAULT_LIVE_SCHEDULE),
    /** The same for the sandbox: ~2 hours by default. */
    WEBHOOK_SANDBOX_RETRY_SCHEDULE: schedule(DEFAULT_SANDBOX_SCHEDULE),
    /** An endpoint failing every attempt for this long is disabled (webhook_endpoint.disabled); 0: never. */
    WEBHOOK_DISABLE_AFTER_SECONDS: int(0, 365 * 86400).default(5 * 86400),
    /** Delivery attempts in flight at once per instance, and per endpoint. */
    WEBHOOK_CONCURRENCY: int(1, 1000).default(50),
    WEBHOOK_ENDPOINT_CONCURRENCY: int(1, 1000).default(10),
    /** How often each instance looks in the store for work other instances made and retries that came due. */
    WEBHOOK_POLL_INTERVAL_MS: int(20, 60_000).default(1000),
    /** Whether sandbox endpoints may be loopback addresses (a receiver on localhost). */
    WEBHOOK_SANDBOX_ALLOW_LOOPBACK: bool.default(true),
    /** Whether sandbox endpoints may be private, CGNAT, link-local or unique-local addresses (never metadata). */
    WEBHOOK_SANDBOX_ALLOW_PRIVATE: bool.default(false),
    /** Finished deliveries (the attempt log) are kept this long. */
    WEBHOOK_LOG_RETENTION_DAYS: int(1, 3650).default(30),
    /**
     * The acquirer production payments go through: `adyen`, or `simulator` (no money moves: for demos and
     * tests, logged as a warning at start). Deliberately no default: unset, production money operations
     * answer 503 `acquirer_not_configured`, never a simulated success (docs/acquirer-port.md).
     */
    PRODUCTION_ACQUIRER: z.enum(["adyen", "simulator"]).optional(),
    /** The acquirer sandbox payments go through: `simulator` (default), or `adyen` (Adyen's test environment). */
    SANDBOX_ACQUIRER: z.enum(["simulator", "adyen"]).default("simulator"),
    // The Adyen connector (adapters/adyen/; docs/going-live-with-adyen.md "Settings"), read where an
    // acquirer is `adyen` (acquirers.ts). One account and one environment for both environments that use it.
    /**
     * Adyen's environment: `test` (Adyen's test platform: no real money) or `live`. Required wherever an
     * acquirer is `adyen`, never defaulted: which money moves is said out loud. The sandbox is never `live`.
     */
    ADYEN_ENVIRONMENT: z.enum(["test", "live"]).optional(),
    /**
     * Adyen's API key (header X-API-Key; a secret: never logged or answered). This or ADYEN_API_KEY_FILE
     * (a file holding it: a container secret) is required wherever an acquirer is `adyen`.
     */
    ADYEN_API_KEY: z.string().min(1).optional(),
    /** A file holding Adyen's API key (trailing whitespace ignored), instead of ADYEN_API_KEY. */
    ADYEN_API_KEY_FILE: z.string().min(1).optional(),
    /** The Adyen merchant account payments are made under. Required wherever an acquirer is `adyen`. */
    ADYEN_MERCHANT_ACCOUNT: z.string().min(1).optional(),
    /**
     * How long one call to Adyen may take, in milliseconds; past it the call is in doubt and is sent
     * again under the same idempotency key (by a retry or the recovery job), never under a new one.
     */
    ADYEN_TIMEOUT_MS: int(1000, 120_000).default(30_000),
    /**
     * Tests and staging only (refused with ADYEN_ENVIRONMENT=live): the base URLs of Adyen's Checkout v71,
     * Payout v50 and Disputes v30 APIs, instead of Adyen's own: the contract-validated stand-in
     * (test/support/adyen-stand-in/) behind Prism's proxy.
     */
    ADYEN_CHECKOUT_URL: z.url().optional(),
    ADYEN_PAYOUT_URL: z.url().optional(),
    ADYEN_DISPUTES_URL: z.url().optional(),
    // Adyen's notifications (receiveAdyenNotifications, docs/going-live-with-adyen.md "Notifications endpoint").
    /**
     * The HMAC keys Adyen signs its notifications with: hexadecimal, as the Customer Area shows them,
     * comma-separated while a key is being rotated (an item signed by any of them is accepted). Secrets:
     * never logged or answered. Unset (and ADYEN_HMAC_KEYS_FILE unset), the endpoint answers 503.
     */
    ADYEN_HMAC_KEYS: z
      .string()
      .min(1)
      .refine((text) => hmacKeyList(text) !== null, {
        message: "must be hexadecimal keys (an even number of 0-9a-f each), comma-separated",
      })
      .optional(),
    /** A file holding ADYEN_HMAC_KEYS (a mounted secret), read at start; not both. */
    ADYEN_HMAC_KEYS_FILE: z.string().min(1).optional(),
    /** The live endpoints' URL prefix Adyen gives each account. Required when PRODUCTION_ACQUIRER is `adyen`. */
    ADYEN_LIVE_URL_PREFIX: z.string().min(1).optional(),
    /**
     * Tests only (refused in production): the simulator runs as a process of its own at this address
     * (adapters/processor-http.ts), so what it applied outlives a server killed by the crash tests.
     */
    TEST_ACQUIRER_URL: z.url().optional(),
    /**
     * Fault injection for the crash tests only: the process kills itself (SIGKILL) right after the n-th
     * change a request commits, before the answer is sent. Refused in production.
     */
    TEST_CRASH_AFTER_COMMITS: int(1, 1_000_000).optional(),

    // The developer console and the API reference (docs/console.md "Console and API reference").
    /** Whether /console (and its sign-in) is served. The API reference at /docs always is. */
    CONSOLE_ENABLED: bool.default(true),
    /**
     * How long a console session lasts from sign-in, in seconds; it is never extended, and ends sooner
     * when its key is revoked, expires or has the signed-in secret rotated out.
     */
    CONSOLE_SESSION_TTL_SECONDS: int(60, 86400).default(3600),

    // Operations: logs and shutdown.
    /** `pretty` (human-readable lines, pino-pretty) or `json` (one JSON object a line). Default: pretty in development only. */
    LOG_FORMAT: z.enum(["pretty", "json"]).optional(),
    /**
     * On SIGTERM/SIGINT: how long in-flight requests and background jobs may take to finish before
     * their connections are cut and the store is closed anyway.
     */
    SHUTDOWN_TIMEOUT_SECONDS: int(0, 600).default(10),
    /**
     * Where the Prometheus metrics are served (GET /metrics, docs/operating.md "Metrics"): a listen
     * address of their own, never the API's port, so they are not public wherever the API is. Unset: no
     * metrics are collected or served. 0: a port the system picks (logged).
     */
    METRICS_PORT: int(0, 65535).optional(),
    /** The address the metrics listener binds (loopback by default: only this machine can scrape). */
    METRICS_HOST: z.string().min(1).default("127.0.0.1"),
    /**
     * Server processes (Node cluster workers) sharing the port and the store. Default: one per CPU core
     * in production on MongoDB; 1 on SQLite, whose one writer more processes cannot share out, and
     * everywhere else (docs/operating.md "One server process per core"). The admin CLI ignores it.
     */
    WORKERS: int(1, 256).optional(),
  })
  .superRefine((c, ctx) => {
    if (c.ADYEN_HMAC_KEYS !== undefined && c.ADYEN_HMAC_KEYS_FILE !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["ADYEN_HMAC_KEYS_FILE"],
        message: "set ADYEN_HMAC_KEYS or ADYEN_HMAC_KEYS_FILE, not both",
      });
    }
    if (c.NODE_ENV === "production") {
      for (const key of ["VAULT_MASTER_KEY", "VAULT_FINGERPRINT_KEY"] as const) {
        if (!c[key]) {
          ctx.addIssue({
            code: "custom",
            path: [key],
            message: "is required in production (generate one with: openssl rand -base64 32)",
          });
        }
      }
    }
    if (c.NODE_ENV === "production" && c.TEST_CRASH_AFTER_COMMITS !== undefined) {
      ctx.addIssue({ code: "custom", path: ["TEST_CRASH_AFTER_COMMITS"], message: "is for tests only; unset it" });
    }
    if (c.NODE_ENV === "production" && c.TEST_ACQUIRER_URL !== undefined) {
      ctx.addIssue({ code: "custom", path: ["TEST_ACQUIRER_URL"], message: "is for tests only; unset it" });
    }
    const adyenFor = [
      ...(c.PRODUCTION_ACQUIRER === "adyen" ? ["PRODUCTION_ACQUIRER"] : []),
      ...(c.SANDBOX_ACQUIRER === "adyen" ? ["SANDBOX_ACQUIRER"] : []),
    ];
    if (adyenFor.length > 0) {
      const when = `is required when ${adyenFor.join(" or ")} is adyen`;
      if (!c.ADYEN_MERCHANT_ACCOUNT) ctx.addIssue({ code: "custom", path: ["ADYEN_MERCHANT_ACCOUNT"], message: when });
      if (!c.ADYEN_HMAC_KEYS && !c.ADYEN_HMAC_KEYS_FILE) {
        ctx.addIssue({ code: "custom", path: ["ADYEN_HMAC_KEYS"], message: `${when} (or ADYEN_HMAC_KEYS_FILE)` });
      }
      if (!c.ADYEN_ENVIRONMENT) {
        ctx.addIssue({ code: "custom", path: ["ADYEN_ENVIRONMENT"], message: `${when} (test or live)` });
      }
      if (!c.ADYEN_API_KEY && !c.ADYEN_API_KEY_FILE) {
        ctx.addIssue({ code: "custom", path: ["ADYEN_API_KEY"], message: `${when} (or ADYEN_API_KEY_FILE)` });
      }
      if (c.ADYEN_API_KEY && c.ADYEN_API_KEY_FILE) {
        ctx.addIssue({
          code: "custom",
          path: ["ADYEN_API_KEY_FILE"],
          message: "set ADYEN_API_KEY or ADYEN_API_KEY_FILE, not both",
        });
      }
      if (c.ADYEN_ENVIRONMENT === "live" && !c.ADYEN_LIVE_URL_PREFIX) {
        ctx.addIssue({
          code: "custom",
          path: ["ADYEN_LIVE_URL_PREFIX"],
          message: "is required when ADYEN_ENVIRONMENT is live (your account's prefix, from Adyen's Customer Area)",
        });
      }
      if (c.ADYEN_ENVIRONMENT === "live" && c.SANDBOX_ACQUIRER === "adyen") {
        ctx.addIssue({
          code: "custom",
          path: ["SANDBOX_ACQUIRER"],
          message:
            "adyen with ADYEN_ENVIRONMENT=live would take sandbox payments in real money; the sandbox uses Adyen's test environment or the simulator",
        });
      }
      if (c.ADYEN_ENVIRONMENT === "live") {
        for (const key of ["ADYEN_CHECKOUT_URL", "ADYEN_PAYOUT_URL", "ADYEN_DISPUTES_URL"] as const) {
          if (c[key] !== undefined) {
            ctx.addIssue({
              code: "custom",
              path: [key],
              message: "is for tests and staging; unset it with ADYEN_ENVIRONMENT=live",
            });
          }
        }
      }
    }
    if (c.METRICS_PORT !== undefined && c.METRICS_PORT !== 0 && c.METRICS_PORT === c.PORT) {
      ctx.addIssue({
        code: "custom",
        path: ["METRICS_PORT"],
        message: "must differ from PORT: the metrics have a listen address of their own, apart from the API",
      });
    }
    if (Boolean(c.VAULT_MASTER_KEY) !== Boolean(c.VAULT_FINGERPRINT_KEY)) {
      ctx.addIssue({
        code: "custom",
        path: ["VAULT_FINGERPRINT_KEY"],
        message: "set both VAULT_MASTER_KEY and VAULT_FINGERPRINT_KEY, or neither (development generates both)",
      });
    }
  });

export type RawConfig = z.infer<typeof ConfigSchema>;

export interface Config extends Omit<RawConfig, "BASE_URL" | "VALIDATE_RESPONSES" | "LOG_FORMAT" | "WORKERS"> {
  BASE_URL: string;
  VALIDATE_RESPONSES: boolean;
  LOG_FORMAT: "pretty" | "json";
  WORKERS: number;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Parses the environment; throws ConfigError listing every bad setting (values of secrets are never echoed). */
/**
 * The server's folder (`server/`): this file is in server/src/ when run from the sources and bundled
 * into server/dist/ in the production build, one level below it either way.
 */
const SERVER_FOLDER = fileURLToPath(new URL("..", import.meta.url));

/**
 * One rule for a relative DATA_DIR (docs/operating.md "Configuration"): from the server's folder, whatever
 * the working directory, so `npm start` (run in server/), `node server/dist/main.js` and
 * `node server/dist/cli.js` run from the repository root by a process manager all open the same store.
 */
function dataDir(value: string): string {
  return value === ":memory:" || isAbsolute(value) ? value : resolve(SERVER_FOLDER, value);
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".") || "(config)"}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const c = parsed.data;
  return {
    ...c,
    DATA_DIR: dataDir(c.DATA_DIR),
    BASE_URL: (c.BASE_URL ?? `http://${c.HOST}:${c.PORT}`).replace(/\/+$/, ""),
    VALIDATE_RESPONSES: c.VALIDATE_RESPONSES ?? c.NODE_ENV !== "production",
    LOG_FORMAT: c.LOG_FORMAT ?? (c.NODE_ENV === "development" ? "pretty" : "json"),
    WORKERS: c.WORKERS ?? (c.NODE_ENV === "production" && c.MONGODB_URI ? availableParallelism() : 1),
  };
}

// The settings each part of the server takes, read off the configuration in one place each.

/** The domain's settings (domain/index.ts DomainSettings). */
export function domainSettings(config: Config): DomainSettings {
  return {
    settlementDelaySeconds: config.SETTLEMENT_DELAY_SECONDS,
    sandboxSettlementDelaySeconds: config.SANDBOX_SETTLEMENT_DELAY_SECONDS,
    requestLogRetentionDays: config.REQUEST_LOG_RETENTION_DAYS,
    eventRetentionDays: config.EVENT_RETENTION_DAYS,
    consoleSessionTtlSeconds: config.CONSOLE_SESSION_TTL_SECONDS,
    cashoutPendingSeconds: config.CASHOUT_PENDING_SECONDS,
    cashoutTransitSeconds: config.CASHOUT_TRANSIT_SECONDS,
    paymentPageTokenTtlSeconds: config.PAYMENT_PAGE_TOKEN_TTL_SECONDS,
    threeDSecureExpirySeconds: config.THREE_D_SECURE_EXPIRY_SECONDS,
    fees: JSON.parse(config.FEE_SCHEDULE) as FeeSchedule,
    disputeFees: JSON.parse(config.DISPUTE_FEES) as Record<string, number>,
    disputeEvidenceSeconds: config.DISPUTE_EVIDENCE_SECONDS,
    acquirerIntentLockSeconds: config.IDEMPOTENCY_LOCK_SECONDS,
    adyenHmacKeys: adyenHmacKeys(config),
    adyenEnvironments: {
      production: config.PRODUCTION_ACQUIRER === "adyen",
      sandbox: config.SANDBOX_ACQUIRER === "adyen",
    },
    webhooks: {
      timeoutMs: config.WEBHOOK_TIMEOUT_SECONDS * 1000,
      liveSchedule: parseSchedule(config.WEBHOOK_RETRY_SCHEDULE),
      sandboxSchedule: parseSchedule(config.WEBHOOK_SANDBOX_RETRY_SCHEDULE),
      disableAfterMs: config.WEBHOOK_DISABLE_AFTER_SECONDS * 1000,
      concurrency: config.WEBHOOK_CONCURRENCY,
      endpointConcurrency: config.WEBHOOK_ENDPOINT_CONCURRENCY,
      pollIntervalMs: config.WEBHOOK_POLL_INTERVAL_MS,
      sandboxAllowLoopback: config.WEBHOOK_SANDBOX_ALLOW_LOOPBACK,
      sandboxAllowPrivate: config.WEBHOOK_SANDBOX_ALLOW_PRIVATE,
      logRetentionDays: config.WEBHOOK_LOG_RETENTION_DAYS,
    },
  };
}

/** Comma-separated hexadecimal keys as a list, or null when one is not hexadecimal. */
function hmacKeyList(text: string): string[] | null {
  const keys = text
    .split(",")
    .map((key) => key.trim())
    .filter((key) => key !== "");
  return keys.length > 0 && keys.every((key) => /^(?:[0-9a-fA-F]{2})+$/.test(key)) ? keys : null;
}

/**
 * The HMAC keys of Adyen's notifications: ADYEN_HMAC_KEYS, or the file ADYEN_HMAC_KEYS_FILE names;
 * none, an empty list (the endpoint answers 503). A file that
 * cannot be read or holds anything but keys stops the start, naming the setting, never the content.
 */
export function adyenHmacKeys(config: Pick<Config, "ADYEN_HMAC_KEYS" | "ADYEN_HMAC_KEYS_FILE">): string[] {
  let text = config.ADYEN_HMAC_KEYS;
  if (config.ADYEN_HMAC_KEYS_FILE !== undefined) {
    try {
      text = readFileSync(config.ADYEN_HMAC_KEYS_FILE, "utf8");
    } catch (err) {
      throw new ConfigError(
        `Invalid configuration:\n  ADYEN_HMAC_KEYS_FILE: cannot be read (${errorCode(err) ?? "error"})`,
      );
    }
  }
  if (text === undefined) return [];
  const keys = hmacKeyList(text);
  if (keys === null) {
    throw new ConfigError(
      `Invalid configuration:\n  ${config.ADYEN_HMAC_KEYS_FILE !== undefined ? "ADYEN_HMAC_KEYS_FILE" : "ADYEN_HMAC_KEYS"}: must hold hexadecimal keys (an even number of 0-9a-f each), comma-separated`,
    );
  }
  return keys;
}

/** The money rules (domain/kernel/money.ts): the accepted currencies and the largest amount. */
export function moneyRules(config: Config): MoneyRules {
  return {
    supportedCurrencies: new Set(parseCurrencyList(config.SUPPORTED_CURRENCIES)),
    maxAmountMajor: config.MAX_AMOUNT,
  };
}

/** The rate limiters' settings (http/rate-limits.ts). */
export function rateLimitSettings(
  config: Pick<
    Config,
    | "RATE_LIMIT_LIVE_PER_SECOND"
    | "RATE_LIMIT_TEST_PER_SECOND"
    | "RATE_LIMIT_ENVIRONMENT_KEYS"
    | "RATE_LIMIT_ANONYMOUS_PER_MINUTE"
    | "RATE_LIMIT_PAYMENT_LINK_PER_MINUTE"
    | "RATE_LIMIT_PAYMENT_ADDRESS_PER_MINUTE"
  >,
): RateLimitSettings {
  return {
    livePerSecond: config.RATE_LIMIT_LIVE_PER_SECOND,
    testPerSecond: config.RATE_LIMIT_TEST_PER_SECOND,
    environmentKeys: config.RATE_LIMIT_ENVIRONMENT_KEYS,
    anonymousPerMinute: config.RATE_LIMIT_ANONYMOUS_PER_MINUTE,
    paymentLinkPerMinute: config.RATE_LIMIT_PAYMENT_LINK_PER_MINUTE,
    paymentAddressPerMinute: config.RATE_LIMIT_PAYMENT_ADDRESS_PER_MINUTE,
  };
}

/** Why DISPUTE_FEES is not a JSON object of three-letter currency codes to whole minor units, or null. */
export function disputeFeesProblem(text: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return 'must be JSON, e.g. {"USD":1500,"EUR":1500}';
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return 'must be a JSON object of currency codes to minor units, e.g. {"USD":1500}';
  }
  for (const [currency, fee] of Object.entries(parsed)) {
    if (!/^[A-Z]{3}$/.test(currency)) return `"${currency}" is not a three-letter currency code in capitals`;
    if (typeof fee !== "number" || !Number.isSafeInteger(fee) || fee < 0) {
      return `the ${currency} fee must be a whole number of minor units, 0 or more (got ${JSON.stringify(fee)})`;
    }
  }
  return null;
}
