import type { components } from "@payments/contract/types";
import type { FraudSettings } from "../domain/fraud/settings.ts";
import { eventObject } from "../domain/kernel/events.ts";
import type { LinkPayment } from "../domain/payment-links/index.ts";
import type {
  BalanceDoc,
  CashoutDoc,
  ChargeDoc,
  EventDoc,
  FraudEvaluationDoc,
  FraudListDoc,
  FraudListItemDoc,
  MerchantDoc,
  PaymentLinkDoc,
  RefundDoc,
  RequestLogDoc,
  ServiceKeyDoc,
  TokenDoc,
  WebhookDeliveryDoc,
  WebhookEndpointDoc,
} from "../domain/records.ts";
import type { PageResult } from "../store/port.ts";

// Stored records → API objects. Each function names exactly the fields the contract shows, so a new
// stored field (a digest, a sealed card) never leaks by accident.

type Schemas = components["schemas"];

export const merchant = (m: MerchantDoc): Schemas["Merchant"] => ({
  id: m.id,
  object: "merchant",
  name: m.name,
  status: m.status,
  metadata: m.metadata,
  livemode: m.livemode,
  created_at: m.created_at,
  updated_at: m.updated_at,
});

export const token = (t: TokenDoc): Schemas["Token"] => ({
  id: t.id,
  object: "token",
  card: {
    brand: t.brand as Schemas["CardBrand"],
    first4: t.first4,
    last4: t.last4,
    exp_month: t.exp_month,
    exp_year: t.exp_year,
    fingerprint: t.fingerprint,
  },
  holder: t.holder,
  livemode: t.livemode,
  created_at: t.created_at,
});

export const serviceKey = (k: ServiceKeyDoc): Schemas["ServiceKey"] => ({
  id: k.id,
  object: "service_key",
  name: k.name,
  prefix: k.prefix,
  scopes: k.scopes as Schemas["Scope"][],
  livemode: k.livemode,
  last_used_at: k.last_used_at,
  created_at: k.created_at,
  expires_at: k.expires_at,
  revoked_at: k.revoked_at,
});

/** Create and rotate answer with the secret, once (ServiceKeyWithSecret; never stored for replay). */
export const serviceKeyWithSecret = ({ key, secret }: { key: ServiceKeyDoc; secret: string }) => ({
  ...serviceKey(key),
  secret,
});

/** Events are flat: envelope first, then the type's own fields; webhook bodies are the same object. */
export const event = (e: EventDoc): Schemas["Event"] => eventObject(e) as Schemas["Event"];

export const charge = (c: ChargeDoc): Schemas["Charge"] => ({
  id: c.id,
  object: "charge",
  merchant_id: c.merchant_id,
  amount: c.amount,
  currency: c.currency,
  status: c.status,
  amount_captured: c.amount_captured,
  amount_refunded: c.amount_refunded,
  payment_method: c.payment_method as Schemas["ChargePaymentMethod"],
  next_action: c.next_action,
  failure_code: c.failure_code,
  failure_message: c.failure_message,
  description: c.description,
  metadata: c.metadata,
  customer: c.customer,
  fraud_evaluation_id: c.fraud_evaluation_id ?? null,
  review: c.review
    ? {
        status: c.review.status,
        opened_at: c.review.opened_at,
        expires_at: c.review.expires_at,
        closed_at: c.review.closed_at,
      }
    : null,
  ...(c.payment_link_id ? { payment_link_id: c.payment_link_id } : {}),
  livemode: c.livemode,
  created_at: c.created_at,
  updated_at: c.updated_at,
});

export const fraudEvaluation = (e: FraudEvaluationDoc): Schemas["FraudEvaluation"] => ({
  id: e.id,
  object: "fraud_evaluation",
  tx_id: e.tx_id,
  source: e.source,
  merchant_id: e.merchant_id,
  amount: e.amount,
  currency: e.currency,
  score: e.score,
  decision: e.decision,
  signals: e.signals,
  rules: e.rules.map((r) => ({ rule: r.rule, points: r.points, reason: r.reason })),
  thresholds: { review: e.thresholds.review, block: e.thresholds.block },
  livemode: e.livemode,
  created_at: e.created_at,
});

export const fraudList = (l: FraudListDoc): Schemas["FraudList"] => ({
  id: l.id,
  object: "fraud_list",
  name: l.name,
  kind: l.kind,
  action: l.action,
  item_count: l.item_count,
  livemode: l.livemode,
  created_at: l.created_at,
});

export const fraudListItem = (i: FraudListItemDoc): Schemas["FraudListItem"] => ({
  id: i.id,
  object: "fraud_list_item",
  list_id: i.list_id,
  value: i.value,
  livemode: i.livemode,
  created_at: i.created_at,
});

export const fraudSettings = (s: FraudSettings): Schemas["FraudSettings"] => ({
  object: "fraud_settings",
  review_threshold: s.reviewThreshold,
  block_threshold: s.blockThreshold,
  review_window_seconds: s.reviewWindowSeconds,
  livemode: s.livemode,
  updated_at: s.updatedAt,
});

export const refund = (r: RefundDoc): Schemas["Refund"] => ({
  id: r.id,
  object: "refund",
  charge_id: r.charge_id,
  amount: r.amount,
  currency: r.currency,
  status: r.status,
  reason: r.reason,
  metadata: r.metadata,
  livemode: r.livemode,
  created_at: r.created_at,
});

export const balance = (merchantId: string, livemode: boolean, rows: BalanceDoc[]): Schemas["Balance"] => ({
  object: "balance",
  merchant_id: merchantId,
  livemode,
  balances: rows
    .map((b) => ({ currency: b.currency, available: b.available, pending: b.pending }))
    .sort((a, b) => a.currency.localeCompare(b.currency)),
});

export const cashout = (c: CashoutDoc): Schemas["Cashout"] => ({
  id: c.id,
  object: "cashout",
  merchant_id: c.merchant_id,
  amount: c.amount,
  currency: c.currency,
  status: c.status,
  // The stored view is already masked; the sealed full destination is never serialized.
  destination: { ...c.destination },
  failure_code: c.failure_code,
  failure_message: c.failure_message,
  description: c.description,
  metadata: c.metadata,
  livemode: c.livemode,
  created_at: c.created_at,
  updated_at: c.updated_at,
});

export const paymentLink = (l: PaymentLinkDoc, url: string): Schemas["PaymentLink"] => ({
  id: l.id,
  object: "payment_link",
  merchant_id: l.merchant_id,
  amount: l.amount,
  currency: l.currency,
  description: l.description,
  payment_methods: l.payment_methods,
  active: l.active,
  expires_at: l.expires_at,
  max_uses: l.max_uses,
  uses: l.uses,
  pending_uses: l.pending_uses,
  after_completion: l.after_completion,
  url,
  metadata: l.metadata,
  livemode: l.livemode,
  created_at: l.created_at,
  updated_at: l.updated_at,
});

/** What a payer may see when a fraud rule blocked the payment: never which rule, or that one did. */
const BLOCKED_FOR_PAYER = "The payment could not be completed. Try another card or payment method.";

/** The public pay operation's answer (PaymentLinkPayment): no metadata, token, fingerprint or customer. */
export const paymentLinkPayment = ({ link, charge: c }: LinkPayment): Schemas["PaymentLinkPayment"] => {
  const paid = c.status === "captured" || c.status === "pending" || c.status === "authorized";
  return {
    object: "payment_link_payment",
    payment_link_id: link.id,
    charge_id: c.id,
    status: c.status,
    amount: c.amount,
    currency: c.currency,
    payment_method: {
      type: c.payment_method.type,
      ...(c.payment_method.brand ? { brand: c.payment_method.brand as Schemas["CardBrand"] } : {}),
      ...(c.payment_method.last4 ? { last4: c.payment_method.last4 } : {}),
    },
    next_action: c.next_action,
    failure_code: c.failure_code,
    failure_message: c.status === "blocked" ? BLOCKED_FOR_PAYER : c.failure_message,
    after_completion: paid ? link.after_completion : null,
    livemode: c.livemode,
    created_at: c.created_at,
  };
};

export function list<D, T>(
  page: PageResult<D>,
  serialize: (d: D) => T,
): { object: "list"; data: T[]; has_more: boolean } {
  return { object: "list", data: page.data.map(serialize), has_more: page.hasMore };
}

export const webhookEndpoint = (e: WebhookEndpointDoc): Schemas["WebhookEndpoint"] => ({
  id: e.id,
  object: "webhook_endpoint",
  url: e.url,
  description: e.description,
  enabled_events: e.enabled_events as Schemas["EnabledEvent"][],
  status: e.status,
  disabled_reason: e.disabled_reason,
  failing_since: e.failing_since,
  previous_secret_expires_at: e.previous_secret_expires_at,
  livemode: e.livemode,
  created_at: e.created_at,
  updated_at: e.updated_at,
});

/** Create and rotate_secret answer with the secret, once (WebhookEndpointWithSecret; never stored for replay). */
export const webhookEndpointWithSecret = ({ endpoint, secret }: { endpoint: WebhookEndpointDoc; secret: string }) => ({
  ...webhookEndpoint(endpoint),
  secret,
});

export const webhookDelivery = (d: WebhookDeliveryDoc): Schemas["WebhookDelivery"] => ({
  id: d.id,
  object: "webhook_delivery",
  endpoint_id: d.endpoint_id,
  event_id: d.event_id,
  event_type: d.event_type as Schemas["EventType"],
  status: d.status,
  attempt_count: d.attempts.length,
  next_attempt_at: d.next_attempt_at,
  attempts: d.attempts.map((a) => ({
    number: a.number,
    trigger: a.trigger,
    attempted_at: a.attempted_at,
    status_code: a.status_code,
    error: a.error,
    error_message: a.error_message,
    latency_ms: a.latency_ms,
    response_body: a.response_body,
    succeeded: a.succeeded,
    next_attempt_at: a.next_attempt_at,
  })),
  livemode: d.livemode,
  created_at: d.created_at,
  updated_at: d.updated_at,
});

/** A request-log record (RequestLogEntry); records are only ever written for requests made with a key. */
export const requestLogEntry = (r: RequestLogDoc): Schemas["RequestLogEntry"] => ({
  id: r.id,
  object: "request_log_entry",
  method: r.method,
  path: r.path,
  status: r.status,
  latency_ms: r.latency_ms,
  key_id: r.key_id ?? null,
  key_prefix: r.key_prefix ?? "",
  source: r.source ?? "api",
  livemode: r.livemode,
  created_at: r.created_at,
});
