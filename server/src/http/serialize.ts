import type { components } from "@payments/contract/types";
import type { FraudSettings } from "../domain/fraud/settings.ts";
import type {
  BalanceDoc,
  ChargeDoc,
  EventDoc,
  FraudEvaluationDoc,
  FraudListDoc,
  FraudListItemDoc,
  MerchantDoc,
  RefundDoc,
  ServiceKeyDoc,
  TokenDoc,
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

/** Events are flat (DESIGN §11): envelope first, then the type's own fields. */
export const event = (e: EventDoc): Schemas["Event"] =>
  ({ id: e.id, type: e.type, created_at: e.created_at, livemode: e.livemode, ...e.payload }) as Schemas["Event"];

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

export function list<D, T>(
  page: PageResult<D>,
  serialize: (d: D) => T,
): { object: "list"; data: T[]; has_more: boolean } {
  return { object: "list", data: page.data.map(serialize), has_more: page.hasMore };
}
