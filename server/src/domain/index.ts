import { createCashouts } from "./cashouts/index.ts";
import { createSimulatorPayoutRail, type PayoutRail } from "./cashouts/payout-rail.ts";
import { createCharges } from "./charges/charges.ts";
import { createSimulatorProcessor, type Processor } from "./charges/processor.ts";
import { createConsoleSessions } from "./console-sessions/console-sessions.ts";
import { createFraud, type FraudScreen } from "./fraud/index.ts";
import { createHealth } from "./health/health.ts";
import type { Caller, Now } from "./kernel/caller.ts";
import { createEvents } from "./kernel/events.ts";
import type { MoneyRules } from "./kernel/money.ts";
import { iso } from "./kernel/time.ts";
import { settleDue } from "./ledger/ledger.ts";
import { createMerchants } from "./merchants/merchants.ts";
import { createPaymentLinks } from "./payment-links/index.ts";
import { createPageTokens } from "./payment-links/page-token.ts";
import type { AppStore } from "./records.ts";
import { createRequestLog } from "./request-log/request-log.ts";
import { createServiceKeys } from "./service-keys/service-keys.ts";
import type { VaultKeys } from "./vault/crypto.ts";
import { createTokens } from "./vault/tokens.ts";
import type { DispatcherLog } from "./webhooks/dispatcher.ts";
import { createWebhooks, type WebhookOptions } from "./webhooks/index.ts";
import { createOutboxSignal } from "./webhooks/outbox.ts";
import type { WebhookSender } from "./webhooks/sender.ts";
import type { Resolver } from "./webhooks/ssrf.ts";

export interface DomainDeps {
  store: AppStore;
  vaultKeys: VaultKeys;
  money: MoneyRules;
  settlementDelaySeconds: number;
  /** How long request-log records are kept (the console's request log). */
  requestLogRetentionDays?: number;
  /** How long a developer-console session lasts from sign-in (default one hour). */
  consoleSessionTtlSeconds?: number;
  now?: Now;
  processor?: Processor;
  fraud?: FraudScreen;
  /** Webhook delivery: settings, the HTTP sender and the resolver (defaults send and resolve nothing). */
  webhooks?: {
    options?: Partial<WebhookOptions> | undefined;
    sender?: WebhookSender | undefined;
    resolve?: Resolver | undefined;
    random?: (() => number) | undefined;
    log?: DispatcherLog | undefined;
  };
  /** The payout rail cashouts are sent through; default: the simulator. */
  payoutRail?: PayoutRail;
  /** The server's public address, for payment links' `url` (a function: known once the server listens). */
  baseUrl?: () => string;
  /** Cashout schedule: seconds pending (cancelable) before sending, and in transit before the outcome. */
  cashoutPendingSeconds?: number;
  cashoutTransitSeconds?: number;
  /** How long a hosted payment page's token stays valid. */
  paymentPageTokenTtlSeconds?: number;
}

/** Every use case, wired to one store. Knows nothing of HTTP or of which database is behind the store. */
export function createDomain(deps: DomainDeps) {
  const now = deps.now ?? (() => new Date());
  // Use cases write through a store that wakes the webhook dispatcher after each commit that records an
  // event (or makes a delivery due); the dispatcher itself uses the plain one.
  const signal = createOutboxSignal();
  const store = signal.watch(deps.store);
  const webhooks = createWebhooks({
    store: deps.store,
    watched: store,
    signal,
    now,
    vaultKeys: deps.vaultKeys,
    ...deps.webhooks,
  });
  const merchants = createMerchants(store, now);
  const serviceKeys = createServiceKeys(store, now);
  const tokens = createTokens(store, deps.vaultKeys, now);
  const fraud = createFraud({ store, now, tokens, merchants, money: deps.money });
  const charges = createCharges({
    store,
    now,
    merchants,
    tokens,
    processor: deps.processor ?? createSimulatorProcessor(),
    fraud: deps.fraud ?? fraud.screen,
    money: deps.money,
    settlementDelaySeconds: deps.settlementDelaySeconds,
  });
  const cashouts = createCashouts({
    store,
    now,
    merchants,
    money: deps.money,
    vaultKeys: deps.vaultKeys,
    rail: deps.payoutRail ?? createSimulatorPayoutRail(),
    pendingSeconds: deps.cashoutPendingSeconds ?? 3600,
    transitSeconds: deps.cashoutTransitSeconds ?? 86400,
  });
  const paymentLinks = createPaymentLinks({
    store,
    now,
    merchants,
    tokens,
    charges,
    money: deps.money,
    pageTokens: createPageTokens(deps.vaultKeys.fingerprintKey, deps.paymentPageTokenTtlSeconds ?? 3600),
    baseUrl: deps.baseUrl ?? (() => "http://127.0.0.1:3000"),
  });
  return {
    merchants,
    tokens,
    cashouts,
    paymentLinks,
    serviceKeys,
    consoleSessions: createConsoleSessions({
      store: deps.store,
      now,
      serviceKeys,
      ttlSeconds: deps.consoleSessionTtlSeconds ?? 3600,
    }),
    events: createEvents(store),
    requestLog: createRequestLog(deps.store),
    webhooks,
    health: createHealth(store),
    charges,
    fraud,
    balances: {
      /** A merchant's balance per currency (GET /v1/merchants/{id}/balance). */
      async get(caller: Caller, merchantId: string) {
        const merchant = await merchants.get(caller, merchantId);
        return { merchant, rows: await store.findAll("balances", { merchant_id: merchant.id }, 1000) };
      },
    },
    /** The background jobs' work, one pass; the server runs it every JOBS_INTERVAL_SECONDS. */
    jobs: {
      /** Expires unpaid local payments whose next_action has run out. */
      expire: () => charges.expireDue(),
      /** Voids charges whose fraud review was left open past its window. */
      expireReviews: () => charges.expireReviewsDue(),
      /** Moves pending credits whose settlement time has come to available. */
      settle: () => settleDue(store, now),
      /** Sends pending cashouts whose time has come, and records the outcome of those in transit. */
      payouts: () => cashouts.advance(),
      /** Forgets Idempotency-Keys older than their time to live. */
      sweepIdempotency: () => store.deleteMany("idempotency", { expires_at: { $lt: iso(now()) } }),
      /** Deletes request-log records older than the retention period. */
      sweepRequestLog: () =>
        store.deleteMany("request_log", {
          created_at: { $lt: iso(new Date(now().getTime() - (deps.requestLogRetentionDays ?? 30) * 86_400_000)) },
        }),
      /** Forgets velocity counts that have left every window. */
      sweepFraudCounters: () => fraud.sweepCounters(),
      /** Forgets finished webhook deliveries older than the attempt log's retention. */
      sweepWebhookLog: () => webhooks.sweepLog(),
      /** Deletes console sessions past their end. */
      sweepConsoleSessions: () => deps.store.deleteMany("console_sessions", { expires_at: { $lt: iso(now()) } }),
    },
  };
}

export type Domain = ReturnType<typeof createDomain>;
