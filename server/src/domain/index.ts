import { createAcquirerNotifications } from "./acquirer-notifications/notifications.ts";
import { createCashouts } from "./cashouts/cashouts.ts";
import type { PayoutRail } from "./cashouts/payout-rail.ts";
import { createCharges } from "./charges/charges.ts";
import type { FraudScreen } from "./charges/fraud-screen.ts";
import type { Processor } from "./charges/processor.ts";
import { createChallengeLinks } from "./charges/three-d-secure.ts";
import type { AppStore } from "./collections.ts";
import { createConsoleSessions } from "./console-sessions/console-sessions.ts";
import { createDisputes } from "./disputes/disputes.ts";
import { createFraud } from "./fraud/index.ts";
import { createHealth } from "./health/health.ts";
import { domainJobs } from "./jobs.ts";
import type { Now } from "./kernel/caller.ts";
import { createClock } from "./kernel/clock.ts";
import { type DomainLog, silentLog } from "./kernel/log.ts";
import type { MoneyRules } from "./kernel/money.ts";
import { type DomainObserver, unobserved } from "./kernel/observer.ts";
import { createBalanceTransactions } from "./ledger/balance-transactions.ts";
import { createBalances } from "./ledger/balances.ts";
import { createFeeSchedules } from "./ledger/fee-schedules.ts";
import type { FeeSchedule } from "./ledger/fees.ts";
import { ledgerMaintenance } from "./ledger/maintenance.ts";
import { createMerchants } from "./merchants/merchants.ts";
import { createPageTokens } from "./payment-links/page-token.ts";
import { createPaymentLinks } from "./payment-links/payment-links.ts";
import { followTransition } from "./payment-links/usage.ts";
import { createRequestLog } from "./request-log/request-log.ts";
import { createSandboxClock } from "./sandbox-clock/sandbox-clock.ts";
import { createSandboxes, type SandboxHost } from "./sandboxes/sandboxes.ts";
import { createServiceKeys } from "./service-keys/service-keys.ts";
import type { VaultKeys } from "./vault/crypto.ts";
import { createTokens } from "./vault/tokens.ts";
import { createEvents } from "./webhooks/events.ts";
import { createWebhooks, type WebhookOptions } from "./webhooks/index.ts";
import { createOutbox } from "./webhooks/outbox.ts";
import type { WebhookSender } from "./webhooks/sender.ts";
import type { Resolver } from "./webhooks/ssrf.ts";
import { createStreamLeases } from "./webhooks/stream-leases.ts";

// The registry of the domain's use cases: every area, wired to one store. Knows nothing of HTTP or of
// which database is behind the store. A new area adds one line here (and one in collections.ts and in
// handlers.ts); docs/contributing.md "Adding a resource, end to end" walks through it.

/** The domain's settings: each comes from the configuration schema (config.ts domainSettings), their one home. */
export interface DomainSettings {
  /** Production captures wait this long in `pending` before they are `available`. */
  settlementDelaySeconds: number;
  /** The same in the sandbox (default 0: available at once); the sandbox clock moves it along. */
  sandboxSettlementDelaySeconds: number;
  /** How long request-log records are kept (the console's request log). */
  requestLogRetentionDays: number;
  /** How many days events are kept (on their environment's clock); older ones are deleted by the sweep. */
  eventRetentionDays: number;
  /** How long a developer-console session lasts from sign-in. */
  consoleSessionTtlSeconds: number;
  /** Cashout schedule: seconds pending (cancelable) before sending, and in transit before the outcome. */
  cashoutPendingSeconds: number;
  cashoutTransitSeconds: number;
  /** How long a hosted payment page's token stays valid. */
  paymentPageTokenTtlSeconds: number;
  /** How long a card charge waits for the payer's 3-D Secure answer before it expires (requires_action). */
  threeDSecureExpirySeconds: number;
  /** The platform's fees per payment method (FEE_SCHEDULE; default none). */
  fees: FeeSchedule;
  /** The dispute fee per currency, in minor units (DISPUTE_FEES; default none). */
  disputeFees: Record<string, number>;
  /** How long a merchant has to answer a dispute (DISPUTE_EVIDENCE_SECONDS). */
  disputeEvidenceSeconds: number;
  /**
   * How long a call to the acquirer left in doubt waits for its own request before the recovery job
   * resolves it (IDEMPOTENCY_LOCK_SECONDS: no request outlasts it; domain/charges/intents.ts).
   */
  acquirerIntentLockSeconds: number;
  webhooks: WebhookOptions;
  /** The HMAC keys Adyen signs its notifications with (ADYEN_HMAC_KEYS); none: the endpoint answers 503. */
  adyenHmacKeys?: readonly string[];
}

export interface DomainDeps {
  store: AppStore;
  /** The server's own clock; each environment's is made from it (kernel/clock.ts). */
  now: Now;
  vaultKeys: VaultKeys;
  money: MoneyRules;
  settings: DomainSettings;
  /**
   * The acquirer of each environment (the shipped one: adapters/processor-simulator.ts). Production's is
   * null while PRODUCTION_ACQUIRER is unset: its money operations are refused (503), never simulated.
   */
  processors: { live: Processor | null; sandbox: Processor };
  /** The payout rail cashouts are sent through (adapters/payout-rail-simulator.ts). */
  payoutRail: PayoutRail;
  /** Sends webhook delivery attempts (adapters/webhook-sender.ts) and resolves endpoint host names. */
  webhookSender: WebhookSender;
  resolve: Resolver;
  /** The server's public address, for payment links' `url` (a function: known once the server listens). */
  baseUrl: () => string;
  /** Replaces the fraud engine as the screen every charge passes (tests of other rules). */
  fraudScreen?: FraudScreen | undefined;
  /** [0, 1), the webhook retries' jitter (tests fix it). */
  random?: (() => number) | undefined;
  /** Where background steps that no caller hears of report failures (the server's logger). */
  log?: DomainLog | undefined;
  /** Told what the domain does, for the operators' metrics (adapters/metrics.ts); default: nobody. */
  observer?: DomainObserver | undefined;
  /**
   * Where sandboxes on demand are made, opened and erased (server/src/sandboxes/host.ts); absent: this
   * domain hosts none (spec/resources/sandboxes.tsp answers 403).
   */
  sandboxHost?: SandboxHost | undefined;
  /** Set when this domain serves one sandbox on demand, on that sandbox's own store: its id and keys' tag. */
  sandbox?: { id: string; keyTag: string } | undefined;
}

export function createDomain(deps: DomainDeps) {
  const { now, settings, money, vaultKeys } = deps;
  const observer = deps.observer ?? unobserved;
  const clock = createClock(now);
  // Every area writes through the outbox's store, which wakes the webhook dispatcher after each commit
  // that recorded an event (or made a delivery due).
  const outbox = createOutbox(deps.store);
  const { store } = outbox;

  const merchants = createMerchants(store, clock);
  const balances = createBalances(store, merchants);
  const balanceTransactions = createBalanceTransactions(store);
  const feeSchedules = createFeeSchedules(store, clock, merchants, settings.fees);
  const serviceKeys = createServiceKeys(store, clock, deps.sandbox?.keyTag);
  const tokens = createTokens(store, vaultKeys, clock);
  const log = deps.log ?? silentLog;
  // Fraud evaluates a stored charge by id through the charges service, made below (fraud is made first:
  // every charge passes its screen); the lookup runs only once a request comes.
  const fraud = createFraud({
    store,
    clock,
    tokens,
    merchants,
    money,
    log,
    charges: { load: (livemode, id, param) => charges.load(livemode, id, param) },
  });
  const charges = createCharges({
    store,
    clock,
    merchants,
    tokens,
    money,
    processors: deps.processors,
    fraud: deps.fraudScreen ?? fraud.screen,
    settlementDelaySeconds: settings.settlementDelaySeconds,
    sandboxSettlementDelaySeconds: settings.sandboxSettlementDelaySeconds,
    onTransition: (tx, from, charge) => followTransition(tx, clock, from, charge),
    onCapture: (tx, captured) => disputes.scheduleTestCardDispute(tx, captured),
    observer,
    fees: feeSchedules.scheduleFor,
    threeDSecureExpirySeconds: settings.threeDSecureExpirySeconds,
    challengeLinks: createChallengeLinks(vaultKeys.fingerprintKey, deps.baseUrl),
    intentLockSeconds: settings.acquirerIntentLockSeconds,
    log,
  });
  const disputes = createDisputes({
    store,
    clock,
    fees: settings.disputeFees,
    evidenceSeconds: settings.disputeEvidenceSeconds,
    // Only the sandbox's simulator knows its dispute test cards in advance (disputes.ts: sandbox only).
    processor: deps.processors.sandbox,
    acquirers: deps.processors,
    charges: charges.disputed,
  });
  const cashouts = createCashouts({
    store,
    clock,
    merchants,
    balances,
    money,
    vaultKeys,
    rail: deps.payoutRail,
    pendingSeconds: settings.cashoutPendingSeconds,
    transitSeconds: settings.cashoutTransitSeconds,
  });
  const acquirerNotifications = createAcquirerNotifications({
    store,
    clock,
    charges,
    disputes,
    cashouts,
    adyenHmacKeys: settings.adyenHmacKeys ?? [],
    log,
  });
  const paymentLinks = createPaymentLinks({
    store,
    clock,
    merchants,
    tokens,
    charges,
    money,
    baseUrl: deps.baseUrl,
    pageTokens: createPageTokens(vaultKeys.fingerprintKey, settings.paymentPageTokenTtlSeconds),
  });
  const webhooks = createWebhooks({
    outbox,
    clock,
    vaultKeys,
    options: settings.webhooks,
    sender: deps.webhookSender,
    resolve: deps.resolve,
    random: deps.random,
    log,
    observer,
  });
  const consoleSessions = createConsoleSessions({
    store,
    now,
    serviceKeys,
    ttlSeconds: settings.consoleSessionTtlSeconds,
  });
  const requestLog = createRequestLog(store, now, settings.requestLogRetentionDays);
  const events = createEvents({
    store,
    clock,
    retentionDays: settings.eventRetentionDays,
    signal: outbox,
    pollIntervalMs: settings.webhooks.pollIntervalMs,
  });
  const streamLeases = createStreamLeases({ store, now });
  const sandboxClock = createSandboxClock({
    store,
    clock,
    charges,
    cashouts,
    paymentLinks,
    disputes,
    dispatcher: webhooks.dispatcher,
  });
  const areas = {
    merchants,
    balances,
    balanceTransactions,
    feeSchedules,
    serviceKeys,
    tokens,
    fraud,
    charges,
    cashouts,
    disputes,
    acquirerNotifications,
    paymentLinks,
    webhooks,
    consoleSessions,
    requestLog,
    events,
    /** The open event streams' slots, counted per key in the store (EVENT_STREAMS_PER_KEY). */
    streamLeases,
    health: createHealth(store),
    sandboxClock,
    sandboxes: createSandboxes({ store, clock, vaultKeys }, deps),
  };
  return {
    ...areas,
    ledger: ledgerMaintenance(store, clock, cashouts),
    /** Each environment's clock (kernel/clock.ts). */
    clock,
    /** The background jobs' work, one pass; the server runs it every JOBS_INTERVAL_SECONDS (jobs.ts). */
    jobs: domainJobs({ ...areas, store, clock, now }),
  };
}

export type Domain = ReturnType<typeof createDomain>;
