import type { Schemas } from "../kernel/operations.ts";
import type { FraudEvaluationDoc, FraudListDoc, FraudListItemDoc } from "./records.ts";
import type { FraudSettings } from "./settings.ts";

// Stored evaluations, lists and settings → the contract's FraudEvaluation, FraudList, FraudListItem and
// FraudSettings (spec/resources/fraud).

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

export const deletedFraudList = (l: FraudListDoc): Schemas["DeletedFraudList"] => ({
  id: l.id,
  object: "fraud_list",
  deleted: true,
});

export const fraudListItem = (i: FraudListItemDoc): Schemas["FraudListItem"] => ({
  id: i.id,
  object: "fraud_list_item",
  list_id: i.list_id,
  value: i.value,
  livemode: i.livemode,
  created_at: i.created_at,
});

export const deletedFraudListItem = (i: FraudListItemDoc): Schemas["DeletedFraudListItem"] => ({
  id: i.id,
  object: "fraud_list_item",
  deleted: true,
});

export const fraudSettings = (s: FraudSettings): Schemas["FraudSettings"] => ({
  object: "fraud_settings",
  review_threshold: s.reviewThreshold,
  block_threshold: s.blockThreshold,
  request_3ds_threshold: s.request3dsThreshold,
  review_window_seconds: s.reviewWindowSeconds,
  livemode: s.livemode,
  updated_at: s.updatedAt,
});
