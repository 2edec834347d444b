import type { BaseDoc, CollectionSpecs, Store, StoreOps } from "../store/port.ts";
import type { FailureCode, NextAction } from "./charges/processor.ts";
import type { Decision, Hit, ListAction, ListKind } from "./fraud/rules.ts";
import type { SealedSecret } from "./vault/crypto.ts";

// The persisted shape of every object, one collection each. API objects are serialized from these
// (server/src/http/serialize.ts); secrets and card data never leave through the API except by the
// vault's audited reveal.

export interface MerchantDoc extends BaseDoc {
  name: string;
  status: "active" | "suspended" | "closed";
  metadata: Record<string, string>;
  updated_at: string;
}

/** The encrypted card number: AES-256-GCM under a per-token data key, itself wrapped by the master key. */
export interface SealedCard {
  /** Which master key wrapped the data key (for rotation of the master key). */
  kek_id: string;
  /** base64: nonce(12) | ciphertext | tag(16) of the data key under the master key. */
  wrapped_dek: string;
  /** base64: nonce(12) | ciphertext | tag(16) of the card number under the data key; AAD = token id. */
  sealed_pan: string;
}

export interface TokenDoc extends BaseDoc {
  holder: string;
  brand: string;
  first4: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  fingerprint: string;
  /** null once deleted: the data key and ciphertext are erased (crypto-shredding). */
  sealed: SealedCard | null;
  deleted_at: string | null;
}

export interface ServiceKeyDoc extends BaseDoc {
  name: string;
  prefix: string;
  scopes: string[];
  /** hex SHA-256 of the current secret. */
  secret_hash: string;
  /** hex SHA-256 of the secret replaced by the last rotation, valid until previous_expires_at. */
  previous_secret_hash: string | null;
  previous_expires_at: string | null;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

export interface EventDoc extends BaseDoc {
  type: string;
  /** The type's own fields (tx_id, score, ...); the API flattens them beside the envelope. */
  payload: Record<string, unknown>;
  /**
   * The outbox flag: true from the transaction that records the event until the webhook dispatcher has
   * created its deliveries (in one transaction with setting it false). Absent on events recorded before
   * webhook delivery existed, and false on events delivered to one endpoint only (test events).
   */
  delivery_pending?: boolean;
}

/**
 * Stored under id `<test|live>:<SHA-256 of the Idempotency-Key>`: keys are scoped to the calling
 * environment and never stored in clear (server/src/http/idempotency.ts).
 */
export interface IdempotencyDoc extends BaseDoc {
  /** SHA-256 of method, path and body: a different request under the same key is a 422. */
  request_hash: string;
  state: "in_flight" | "done";
  /** The request id of the request that holds the key; a retry that takes over a dead one replaces it. */
  owner: string;
  /** For in-flight records: when a crashed first request stops blocking retries. */
  locked_until: string;
  status: number | null;
  headers: Record<string, string> | null;
  /** The response body exactly as first sent; null while in flight and when withheld. */
  body: string | null;
  /** The answer carried a secret or a card number, so it was not kept: a retry gets 409 naming `object_id`. */
  withheld: boolean;
  /** For withheld answers: the id of the object the request created or changed. */
  object_id: string | null;
  /** Whether the outcome was written in the same transaction as the change (true for every change). */
  atomic: boolean;
  expires_at: string;
}

/** Who revealed which card, when (operation revealToken writes one per reveal). */
export interface AuditDoc extends BaseDoc {
  action: "token.reveal";
  object_id: string;
  key_id: string;
  request_id: string;
}

/** One line of the request log (operation listRequestLog; the console shows it). Card numbers are masked. */
export interface RequestLogDoc extends BaseDoc {
  request_id: string;
  method: string;
  path: string;
  status: number;
  latency_ms: number;
  key_prefix: string | null;
  /** The key that made the request; absent on records written before it was kept. */
  key_id?: string | null;
  /** `console`: sent by the developer console for a signed-in key; absent (`api`) on older records. */
  source?: "api" | "console";
}

export type ChargeStatus =
  | "pending"
  | "authorized"
  | "captured"
  | "partially_refunded"
  | "refunded"
  | "declined"
  | "blocked"
  | "voided"
  | "expired";

/** A charge held by fraud evaluation (spec: ChargeReview). */
export interface ChargeReviewDoc {
  status: "open" | "approved" | "rejected" | "expired";
  opened_at: string;
  expires_at: string;
  closed_at: string | null;
  /** Whether approval captures (the charge's `capture`); never shown. */
  capture: boolean;
}

export interface ChargeDoc extends BaseDoc {
  merchant_id: string;
  amount: number;
  currency: string;
  status: ChargeStatus;
  amount_captured: number;
  amount_refunded: number;
  payment_method: {
    type: "card" | "pix" | "boleto" | "oxxo" | "spei" | "sepa_debit";
    token?: string;
    brand?: string;
    last4?: string;
    fingerprint?: string;
  };
  next_action: NextAction | null;
  /** next_action.expires_at, top-level so the expiry job can query it. */
  expires_at: string | null;
  failure_code: FailureCode | "fraud_blocked" | null;
  failure_message: string | null;
  description: string | null;
  metadata: Record<string, string>;
  customer: { email?: string; ip?: string; country?: string } | null;
  /** The acquirer's reference for the authorization (never shown). */
  processor_ref: string | null;
  /** The evaluation made before authorizing; absent on charges stored before fraud evaluation existed. */
  fraud_evaluation_id?: string | null;
  review?: ChargeReviewDoc | null;
  /** review.expires_at while the review is open (null otherwise), top-level so the expiry job can query it. */
  review_expires_at?: string | null;
  /** Set when the charge was made through a payment link's hosted page (domain/payment-links). */
  payment_link_id?: string | null;
  updated_at: string;
}

export interface RefundDoc extends BaseDoc {
  charge_id: string;
  merchant_id: string;
  amount: number;
  currency: string;
  status: "succeeded";
  reason: "requested_by_customer" | "duplicate" | "fraudulent" | null;
  metadata: Record<string, string>;
}

/**
 * One immutable money movement. `amount` is signed: credits positive, debits negative.
 * A merchant's balance in a bucket always equals the sum of its entries there.
 */
export interface LedgerEntryDoc extends BaseDoc {
  merchant_id: string;
  currency: string;
  bucket: "available" | "pending";
  amount: number;
  type: "capture" | "refund" | "settlement" | "cashout" | "cashout_reversal";
  /** The charge, refund, settled entry or cashout that caused it. */
  source_id: string;
  /** For pending capture credits: when they become available, and whether that has happened. */
  available_on: string | null;
  settled: boolean | null;
  /**
   * For pending capture credits: how much refunds took from this credit before it settled (0 to
   * `amount`); settlement moves only the rest to `available`. With `settled`, the only fields of an
   * entry that ever change.
   */
  drawn: number | null;
}

/** A merchant's balance in one currency; id `<merchant id>:<currency>`. Never negative. */
export interface BalanceDoc extends BaseDoc {
  merchant_id: string;
  currency: string;
  available: number;
  pending: number;
  updated_at: string;
}

export type CashoutStatus = "pending" | "in_transit" | "paid" | "failed" | "canceled";
export type CashoutFailureCode = "account_closed" | "no_account" | "declined" | "could_not_process";
export type DestinationType = "iban" | "us_bank_account" | "pix" | "clabe";
export type PixKeyType = "cpf" | "cnpj" | "email" | "phone" | "evp";

/** A cashout's destination as it may be shown (CashoutDestination in the contract): the account masked. */
export interface DestinationView {
  type: DestinationType;
  masked: string;
  last4: string;
  account_holder: string | null;
  country?: string;
  routing_number?: string;
  account_type?: "checking" | "savings";
  bank_code?: string;
  key_type?: PixKeyType;
}

/** Money a merchant sends out of its available balance (spec/resources/cashouts.tsp). */
export interface CashoutDoc extends BaseDoc {
  merchant_id: string;
  amount: number;
  currency: string;
  status: CashoutStatus;
  destination: DestinationView;
  /**
   * The full destination (account number, key), sealed like a card number under the vault keys with the
   * cashout id as associated data: only the payout rail opens it (domain/cashouts/index.ts).
   */
  sealed_destination: SealedCard;
  failure_code: CashoutFailureCode | null;
  failure_message: string | null;
  description: string | null;
  metadata: Record<string, string>;
  /** The payout rail's reference, once the cashout was handed to it. */
  payout_ref: string | null;
  /** When the payout job next acts on it (sends a pending one, asks about an in_transit one); null when final. */
  next_step_at: string | null;
  updated_at: string;
}

export type PaymentLinkMethod = "card" | "pix" | "boleto" | "oxxo" | "spei" | "sepa_debit";

export type AfterCompletion = { type: "message"; message: string } | { type: "redirect"; url: string };

/** A shareable link to the hosted payment page (spec/resources/payment-links.tsp). */
export interface PaymentLinkDoc extends BaseDoc {
  merchant_id: string;
  amount: number;
  currency: string;
  description: string;
  payment_methods: PaymentLinkMethod[];
  active: boolean;
  expires_at: string | null;
  max_uses: number | null;
  /** Completed payments (captured charges). */
  uses: number;
  /** Charges started and not yet completed (pending local payments, held authorizations). */
  pending_uses: number;
  /**
   * uses + pending_uses, kept as one field so that one conditional increment (`claimed < max_uses`)
   * guards the limit under concurrency (domain/payment-links/usage.ts).
   */
  claimed: number;
  after_completion: AfterCompletion | null;
  metadata: Record<string, string>;
  updated_at: string;
}

/**
 * One window's shared count for one rate-limited client (a key or an address), id
 * `<limiter>:<client>:<window number>`; swept once expired (server/src/http/rate-limits.ts).
 */
export interface RateLimitDoc extends BaseDoc {
  hits: number;
  expires_at: string;
}

/** A URL that receives events (spec/resources/webhook-endpoints.tsp, WebhookEndpoint). */
export interface WebhookEndpointDoc extends BaseDoc {
  url: string;
  description: string | null;
  /** Event types, or "*" for all. */
  enabled_events: string[];
  status: "enabled" | "disabled";
  disabled_reason: "requested" | "gone" | "failing" | null;
  /** The first failed attempt since the last success, or null. */
  failing_since: string | null;
  /** The signing secret, encrypted under the vault's master key (never stored in clear). */
  secret: SealedSecret;
  /** The secret a rotation replaced, still signing until previous_secret_expires_at. */
  previous_secret: SealedSecret | null;
  previous_secret_expires_at: string | null;
  updated_at: string;
}

/** One attempt of a delivery (WebhookAttempt in the contract). */
export interface WebhookAttemptRecord {
  number: number;
  trigger: "automatic" | "manual";
  attempted_at: string;
  status_code: number | null;
  error: "timeout" | "dns_error" | "connection_error" | "tls_error" | "address_refused" | null;
  error_message: string | null;
  latency_ms: number;
  response_body: string | null;
  succeeded: boolean;
  next_attempt_at: string | null;
}

/**
 * One event's delivery to one endpoint. The dispatcher claims the next attempt with a lease: a
 * conditional update that sets `claim` to its own token and moves `next_attempt_at` to the lease's end,
 * so no other instance takes it until the lease runs out (the claimant crashed); the outcome is written
 * only while the claim is still the claimant's.
 */
export interface WebhookDeliveryDoc extends BaseDoc {
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: "pending" | "succeeded" | "failed";
  /** What the next attempt is: `automatic` ones follow the retry schedule, a `manual` one is not retried. */
  mode: "automatic" | "manual";
  /** When the next attempt is due; while claimed, when the claim's lease ends; null when none is scheduled. */
  next_attempt_at: string | null;
  /** The claim token of the instance sending the next attempt, or null. */
  claim: string | null;
  attempts: WebhookAttemptRecord[];
  updated_at: string;
}

/**
 * A developer-console session (domain/console-sessions.ts), stored under the SHA-256 digest of its
 * random token: the token itself lives only in the browser's HttpOnly cookie.
 */
export interface ConsoleSessionDoc extends BaseDoc {
  /** The service key the holder signed in with; re-checked on every request. */
  key_id: string;
  /** SHA-256 of the secret that signed in (as service_keys stores it): the session ends when it stops working. */
  secret_hash: string;
  /** When the session ends, whatever happens: sign-in time plus CONSOLE_SESSION_TTL_SECONDS (or the key's expiry). */
  expires_at: string;
}

/** One-off facts about the installation (e.g. "the bootstrap sandbox key was created"). */
export interface SettingDoc extends BaseDoc {
  value: string;
}

/** A fraud evaluation (spec: FraudEvaluation). */
export interface FraudEvaluationDoc extends BaseDoc {
  tx_id: string;
  source: "charge" | "transaction" | "facts";
  merchant_id: string | null;
  amount: number;
  currency: string;
  score: number;
  decision: Decision;
  signals: string[];
  rules: Hit[];
  thresholds: { review: number; block: number };
}

/** A value list (spec: FraudList). Kind, action and name are fixed at creation. */
export interface FraudListDoc extends BaseDoc {
  name: string;
  kind: ListKind;
  action: ListAction;
  item_count: number;
}

/**
 * A value on a list (spec: FraudListItem). The list's kind, action and name are copied onto it, so
 * one indexed query on `match_key` (`<kind>:<value>`) finds every list a fact is on.
 */
export interface FraudListItemDoc extends BaseDoc {
  list_id: string;
  list_name: string;
  kind: ListKind;
  action: ListAction;
  /** Normalized (see domain/fraud/lists.ts). */
  value: string;
  match_key: string;
  /** `<list id>|<value>`: unique, so a list never holds a value twice. */
  list_value: string;
}

/** One environment's fraud settings (spec: FraudSettings); id `test` or `live`. */
export interface FraudSettingsDoc extends BaseDoc {
  review_threshold: number;
  block_threshold: number;
  review_window_seconds: number;
  updated_at: string;
}

/** Charge attempts of one card or IP address in one minute (domain/fraud/counters.ts). */
export interface FraudCounterDoc extends BaseDoc {
  attempts: number;
  small: number;
  declines: number;
  /** When the minute has left every velocity window: the sweep deletes it then. */
  expires_at: string;
}

/** A merchant's accepted charges in one currency, for amount_anomaly; id `<merchant id>:<currency>`. */
export interface FraudMerchantStatsDoc extends BaseDoc {
  count: number;
  sum: number;
}

export type Docs = {
  merchants: MerchantDoc;
  tokens: TokenDoc;
  service_keys: ServiceKeyDoc;
  events: EventDoc;
  idempotency: IdempotencyDoc;
  audit_log: AuditDoc;
  request_log: RequestLogDoc;
  settings: SettingDoc;
  charges: ChargeDoc;
  refunds: RefundDoc;
  ledger_entries: LedgerEntryDoc;
  balances: BalanceDoc;
  rate_limits: RateLimitDoc;
  fraud_evaluations: FraudEvaluationDoc;
  fraud_lists: FraudListDoc;
  fraud_list_items: FraudListItemDoc;
  fraud_settings: FraudSettingsDoc;
  fraud_counters: FraudCounterDoc;
  fraud_merchant_stats: FraudMerchantStatsDoc;
  webhook_endpoints: WebhookEndpointDoc;
  webhook_deliveries: WebhookDeliveryDoc;
  cashouts: CashoutDoc;
  payment_links: PaymentLinkDoc;
  console_sessions: ConsoleSessionDoc;
};

export type AppStore = Store<Docs>;
export type AppTx = StoreOps<Docs>;

export const COLLECTIONS: CollectionSpecs<Docs> = {
  merchants: { indexes: [{ fields: ["livemode", "status"] }] },
  tokens: { indexes: [{ fields: ["livemode", "fingerprint"] }] },
  service_keys: {
    indexes: [
      { fields: ["secret_hash"], unique: true },
      { fields: ["previous_secret_hash"] },
      { fields: ["livemode"] },
    ],
  },
  // The outbox: pending events, oldest first.
  events: { indexes: [{ fields: ["livemode", "type"] }, { fields: ["delivery_pending", "created_at"] }] },
  idempotency: { indexes: [{ fields: ["expires_at"] }] },
  audit_log: { indexes: [{ fields: ["object_id"] }] },
  // created_at alone: the retention job deletes by age across both environments.
  request_log: { indexes: [{ fields: ["livemode"] }, { fields: ["created_at"] }, { fields: ["livemode", "key_id"] }] },
  settings: { indexes: [] },
  charges: {
    indexes: [
      { fields: ["livemode", "merchant_id"] },
      { fields: ["livemode", "status"] },
      { fields: ["status", "expires_at"] },
      { fields: ["review_expires_at"] },
      { fields: ["livemode", "payment_link_id"] },
    ],
  },
  refunds: { indexes: [{ fields: ["charge_id"] }] },
  ledger_entries: {
    indexes: [
      { fields: ["merchant_id", "currency"] },
      { fields: ["bucket", "settled", "available_on"] },
      { fields: ["source_id"] },
    ],
  },
  balances: { indexes: [{ fields: ["merchant_id"] }] },
  rate_limits: { indexes: [{ fields: ["expires_at"] }] },
  fraud_evaluations: { indexes: [{ fields: ["livemode", "tx_id"] }, { fields: ["livemode", "decision"] }] },
  fraud_lists: { indexes: [{ fields: ["livemode", "kind"] }] },
  fraud_list_items: {
    indexes: [{ fields: ["livemode", "match_key"] }, { fields: ["list_id"] }, { fields: ["list_value"], unique: true }],
  },
  fraud_settings: { indexes: [] },
  fraud_counters: { indexes: [{ fields: ["expires_at"] }] },
  fraud_merchant_stats: { indexes: [] },
  webhook_endpoints: { indexes: [{ fields: ["livemode", "status"] }] },
  webhook_deliveries: {
    indexes: [
      // The dispatcher's queue: pending deliveries, soonest due first.
      { fields: ["status", "next_attempt_at"] },
      { fields: ["endpoint_id", "status"] },
      // One delivery per event and endpoint: fan-out, redelivery and tests can never make two.
      { fields: ["event_id", "endpoint_id"], unique: true },
    ],
  },
  cashouts: {
    indexes: [
      { fields: ["livemode", "merchant_id"] },
      { fields: ["livemode", "status"] },
      { fields: ["status", "next_step_at"] },
    ],
  },
  payment_links: { indexes: [{ fields: ["livemode", "merchant_id"] }] },
  console_sessions: { indexes: [{ fields: ["expires_at"] }] },
};
