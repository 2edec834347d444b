import type { RawConfig } from "../config.ts";
import { adyenHmacKeys } from "./acquirers.ts";
import { checked } from "./kit.ts";
import { disputeFees, feeSchedule } from "./money.ts";
import { webhookOptions } from "./webhooks.ts";

// Each area's slice of the configuration, read off the parsed settings in this one place. An area names
// the slices it uses in its area.ts (`settings: SettingsOf<"cashouts">`, domain/kernel/settings.ts), so
// it sees those and no other: `tsc` refuses an area reading a slice it did not name
// (domain/kernel/settings.types.test.ts), and domain/index.ts DEPS_ARE_GIVEN that the domain is given
// every slice an area names. A slice's types are those of the settings it is read from (config/*.ts).

/** The settings the domain's slices are read from. */
type DomainConfig = Pick<
  RawConfig,
  | "SETTLEMENT_DELAY_SECONDS"
  | "PRODUCTION_ACQUIRER"
  | "SANDBOX_ACQUIRER"
  | "SANDBOX_SETTLEMENT_DELAY_SECONDS"
  | "THREE_D_SECURE_EXPIRY_SECONDS"
  | "IDEMPOTENCY_LOCK_SECONDS"
  | "FEE_SCHEDULE"
  | "DISPUTE_FEES"
  | "DISPUTE_EVIDENCE_SECONDS"
  | "CASHOUT_PENDING_SECONDS"
  | "CASHOUT_TRANSIT_SECONDS"
  | "PAYMENT_PAGE_TOKEN_TTL_SECONDS"
  | "CONSOLE_SESSION_TTL_SECONDS"
  | "REQUEST_LOG_RETENTION_DAYS"
  | "EVENT_RETENTION_DAYS"
  | "ADYEN_HMAC_KEYS"
  | "ADYEN_HMAC_KEYS_FILE"
  | keyof Parameters<typeof webhookOptions>[0]
>;

/** The domain's settings (domain/index.ts DomainDeps.settings): one slice per area that has settings. */
export function domainSettings(config: DomainConfig) {
  const hmacKeys: readonly string[] = adyenHmacKeys(config);
  return {
    charges: {
      /** Production captures wait this long in `pending` before they are `available` (SETTLEMENT_DELAY_SECONDS). */
      settlementDelaySeconds: config.SETTLEMENT_DELAY_SECONDS,
      /** The same in the sandbox (default 0: available at once); the sandbox clock moves it along. */
      sandboxSettlementDelaySeconds: config.SANDBOX_SETTLEMENT_DELAY_SECONDS,
      /** How long a card charge waits for the payer's 3-D Secure answer before it expires (requires_action). */
      threeDSecureExpirySeconds: config.THREE_D_SECURE_EXPIRY_SECONDS,
      /**
       * How long a call to the acquirer left in doubt waits for its own request before the recovery job
       * resolves it (IDEMPOTENCY_LOCK_SECONDS: no request outlasts it; domain/charges/intents.ts).
       */
      intentLockSeconds: config.IDEMPOTENCY_LOCK_SECONDS,
    },
    /** The platform's fees per payment method (FEE_SCHEDULE; default none). */
    ledger: { fees: checked("FEE_SCHEDULE", feeSchedule(config.FEE_SCHEDULE)) },
    disputes: {
      /** The dispute fee per currency, in minor units (DISPUTE_FEES; default none). */
      fees: checked("DISPUTE_FEES", disputeFees(config.DISPUTE_FEES)),
      /** How long a merchant has to answer a dispute (DISPUTE_EVIDENCE_SECONDS). */
      evidenceSeconds: config.DISPUTE_EVIDENCE_SECONDS,
    },
    /** Cashout schedule: seconds pending (cancelable) before sending, and in transit before the outcome. */
    cashouts: { pendingSeconds: config.CASHOUT_PENDING_SECONDS, transitSeconds: config.CASHOUT_TRANSIT_SECONDS },
    /** How long a hosted payment page's token stays valid. */
    paymentLinks: { pageTokenTtlSeconds: config.PAYMENT_PAGE_TOKEN_TTL_SECONDS },
    /** How long a developer-console session lasts from sign-in. */
    consoleSessions: { ttlSeconds: config.CONSOLE_SESSION_TTL_SECONDS },
    /** How long request-log records are kept (the console's request log). */
    requestLog: { retentionDays: config.REQUEST_LOG_RETENTION_DAYS },
    webhooks: webhookOptions(config),
    /** How many days events are kept (on their environment's clock); older ones are deleted by the sweep. */
    events: { retentionDays: config.EVENT_RETENTION_DAYS },
    acquirerNotifications: {
      /** The HMAC keys Adyen signs its notifications with (ADYEN_HMAC_KEYS); none: the endpoint answers 503. */
      adyenHmacKeys: hmacKeys,
      /**
       * Which of our environments Adyen serves (PRODUCTION_ACQUIRER, SANDBOX_ACQUIRER = adyen): its
       * notifications belong to that one, whatever their `live` says (acquirer-notifications/notifications.ts).
       */
      adyenEnvironments: {
        production: config.PRODUCTION_ACQUIRER === "adyen",
        sandbox: config.SANDBOX_ACQUIRER === "adyen",
      },
    },
  };
}

/** Every slice, by name: what the domain is given. */
export type DomainSettings = ReturnType<typeof domainSettings>;

/** The slices an area names (`settings: SettingsOf<"charges" | "ledger">`): those, and no others. */
export type SettingsOf<K extends keyof DomainSettings> = Pick<DomainSettings, K>;
