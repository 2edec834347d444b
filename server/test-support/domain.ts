import { randomBytes } from "node:crypto";
import { createSimulatorPayoutRail } from "../src/adapters/payout-rail-simulator.ts";
import { createSimulatorProcessor } from "../src/adapters/processor-simulator.ts";
import { domainSettings, loadConfig } from "../src/config.ts";
import { type AppStore, COLLECTIONS, type Docs } from "../src/domain/areas.ts";
import type { PayoutRail } from "../src/domain/cashouts/payout-rail.ts";
import type { FraudScreen } from "../src/domain/charges/fraud-screen.ts";
import type { Processor } from "../src/domain/charges/processor.ts";
import { createDomain, type DomainDeps } from "../src/domain/index.ts";
import type { Caller } from "../src/domain/kernel/caller.ts";
import { DomainError } from "../src/domain/kernel/errors.ts";
import type { DomainObserver } from "../src/domain/kernel/observer.ts";
import type { FeeSchedule } from "../src/domain/ledger/fees.ts";
import type { VaultKeys } from "../src/domain/vault/crypto.ts";
import { parseVaultKeys } from "../src/domain/vault/keys.ts";
import type { WebhookOptions } from "../src/domain/webhooks/index.ts";
import type { WebhookSender } from "../src/domain/webhooks/sender.ts";
import type { Resolver } from "../src/domain/webhooks/ssrf.ts";
import { openSqliteStore } from "../src/store/sqlite.ts";

// Test support, outside src (nothing the server ships imports it). For unit tests of the domain: the
// real domain on an in-memory store, with a clock the test moves.
// Its settings are the configuration's defaults (config.ts, their one home), except where a test says
// otherwise; the card processor and payout rail are the shipped simulators.

/** A sender that sends nothing: webhook attempts fail with connection_error unless a test gives its own. */
export const offlineSender: WebhookSender = {
  send: async () => ({
    kind: "error",
    error: "connection_error",
    message: "no webhook sender is configured",
    latencyMs: 0,
  }),
};

/** A resolver that resolves nothing, so no test ever asks a DNS server. */
export const offlineResolver: Resolver = async (hostname) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
};

const DEFAULTS = domainSettings(loadConfig({ NODE_ENV: "test" }));

export function testDomain(
  options: {
    /** Default 0 here (production's default is two days): most tests want captured money available at once. */
    settlementDelaySeconds?: number;
    /** The sandbox's (default 0, as configured by default). */
    sandboxSettlementDelaySeconds?: number;
    start?: Date;
    /** A clock shared with other domains on the same store (advance() and at() then move nothing). */
    now?: () => Date;
    processor?: Processor;
    /** Production's acquirer, when not `processor`; null: PRODUCTION_ACQUIRER unset (money operations refused). */
    liveProcessor?: Processor | null;
    fraud?: FraudScreen;
    /** Webhook settings, sender and resolver (defaults: nothing is sent and no name resolves). */
    webhooks?: {
      options?: Partial<WebhookOptions>;
      sender?: WebhookSender;
      resolve?: Resolver;
      random?: () => number;
      log?: DomainDeps["log"];
    };
    /** A store to share with another domain (two instances on one store); default a fresh in-memory one. */
    store?: AppStore;
    /** Vault keys to share with another domain on the same store. */
    vaultKeys?: VaultKeys;
    payoutRail?: PayoutRail;
    cashoutPendingSeconds?: number;
    cashoutTransitSeconds?: number;
    /** Told what the domain does (the metrics' port); default: nobody. */
    observer?: DomainObserver;
    /** The fee schedule (default: the configuration's, none). */
    fees?: FeeSchedule;
    /** The dispute fee per currency (default: the configuration's, none). */
    disputeFees?: Record<string, number>;
    /** The HMAC keys of Adyen's notifications (default: the configuration's, none: the endpoint is off). */
    adyenHmacKeys?: string[];
    /** Which environments Adyen serves (PRODUCTION_ACQUIRER, SANDBOX_ACQUIRER); default unset: `live` decides. */
    adyenEnvironments?: { production: boolean; sandbox: boolean };
    /** Where the domain logs what no caller hears of (default: nowhere). */
    log?: DomainDeps["log"];
    /** The server's public address, BASE_URL (default https://pay.example.com); may change between calls. */
    baseUrl?: () => string;
  } = {},
) {
  const store = options.store ?? openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
  const vaultKeys =
    options.vaultKeys ??
    parseVaultKeys({
      masterKey: randomBytes(32).toString("base64"),
      fingerprintKey: randomBytes(32).toString("base64"),
    });
  let clock = options.start ?? new Date("2026-11-21T10:00:00Z");
  const domain = createDomain({
    store,
    now: options.now ?? (() => clock),
    vaultKeys,
    money: { supportedCurrencies: new Set(["USD", "EUR", "BRL", "MXN", "JPY", "KWD"]), maxAmountMajor: 999_999 },
    settings: {
      ...DEFAULTS,
      charges: {
        ...DEFAULTS.charges,
        settlementDelaySeconds: options.settlementDelaySeconds ?? 0,
        sandboxSettlementDelaySeconds:
          options.sandboxSettlementDelaySeconds ?? DEFAULTS.charges.sandboxSettlementDelaySeconds,
      },
      cashouts: {
        pendingSeconds: options.cashoutPendingSeconds ?? DEFAULTS.cashouts.pendingSeconds,
        transitSeconds: options.cashoutTransitSeconds ?? DEFAULTS.cashouts.transitSeconds,
      },
      webhooks: { ...DEFAULTS.webhooks, ...options.webhooks?.options },
      ledger: { fees: options.fees ?? DEFAULTS.ledger.fees },
      disputes: { ...DEFAULTS.disputes, fees: options.disputeFees ?? DEFAULTS.disputes.fees },
      acquirerNotifications: {
        adyenHmacKeys: options.adyenHmacKeys ?? DEFAULTS.acquirerNotifications.adyenHmacKeys,
        adyenEnvironments: options.adyenEnvironments ?? DEFAULTS.acquirerNotifications.adyenEnvironments,
      },
    },
    processors: (() => {
      const sandbox = options.processor ?? createSimulatorProcessor();
      return { sandbox, live: options.liveProcessor === undefined ? sandbox : options.liveProcessor };
    })(),
    payoutRail: options.payoutRail ?? createSimulatorPayoutRail(),
    webhookSender: options.webhooks?.sender ?? offlineSender,
    resolve: options.webhooks?.resolve ?? offlineResolver,
    fraudScreen: options.fraud,
    random: options.webhooks?.random,
    log: options.log ?? options.webhooks?.log,
    baseUrl: options.baseUrl ?? (() => "https://pay.example.com"),
    observer: options.observer,
  });
  const caller = (livemode = false): Caller => ({
    keyId: "kid_test",
    livemode,
    scopes: ["*"],
    keyPrefix: "key_test_abcd",
    requestId: "req_test",
  });
  return {
    store,
    domain,
    vaultKeys,
    caller,
    advance(seconds: number) {
      clock = new Date(clock.getTime() + seconds * 1000);
    },
    /** Sets the clock to an absolute time. */
    at(time: Date | string) {
      clock = new Date(time);
    },
    now: () => clock,
  };
}

/** An observer that keeps every report, in order, as `[kind, ...arguments]`. */
export function recordingObserver() {
  const reports: unknown[][] = [];
  const observer: DomainObserver = {
    chargeStatus: (status, livemode) => reports.push(["charge", status, livemode]),
    webhookAttempt: (attempt) => reports.push(["attempt", attempt]),
    webhookDeliveryFailed: (livemode) => reports.push(["delivery failed", livemode]),
    webhookEndpointDisabled: (reason, livemode) => reports.push(["endpoint disabled", reason, livemode]),
  };
  return { observer, reports, of: (kind: string) => reports.filter((r) => r[0] === kind) };
}

/** The DomainError a use case refused with; fails when it succeeded or threw anything else. */
export async function refusal(promise: Promise<unknown>): Promise<DomainError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

/** The error a synchronous call threw; fails when it returned. */
export function thrownBy(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected a throw");
}
