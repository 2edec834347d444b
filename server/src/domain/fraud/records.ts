import type { BaseDoc } from "../../store/port.ts";
import { collection } from "../kernel/records.ts";
import type { AreaDocs, AreaStore, AreaTx } from "../kernel/store.ts";
import type { Decision, Hit, ListAction, ListKind } from "./rules.ts";

// Fraud evaluation's stored shapes (spec/resources/fraud): evaluations, value lists and their items, the
// settings of each environment, and the counts the velocity and amount rules read.

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
  /** Absent on settings stored before 3-D Secure existed (off). */
  request_3ds_threshold?: number | null;
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

/**
 * A card's `fraudulent` disputes (issue 31), for the disputed_card rule; id `<test|live>:<fingerprint>`.
 * Written by the dispute's opening, in its transaction (domain/disputes), through recordFraudDispute.
 */
export interface FraudCardDisputesDoc extends BaseDoc {
  count: number;
  /** The newest such dispute, for the reason. */
  last_dispute_id: string;
}

/**
 * A merchant's recent `fraudulent` disputes (issue 31), for the disputed_merchant rule; id
 * `<test|live>:<merchant id>`. Written by the dispute's opening, in its transaction, through
 * recordFraudDispute.
 */
export interface FraudMerchantDisputesDoc extends BaseDoc {
  /**
   * When each of the merchant's latest fraud disputes opened (the environment's clock), oldest first; at
   * most MERCHANT_DISPUTES_KEPT, enough for the rule's count (facts.ts).
   */
  opened: string[];
  /** The newest such dispute, for the reason. */
  last_dispute_id: string;
}

export const fraudCollections = {
  // listFraudEvaluations by decision, fraud lists by kind and a list's items read their page straight
  // from an index, in the listing order (issue 36: by decision scanned, 33 times its empty-store time). By
  // charge too: without created_at, id SQLite (no statistics) walks the listing index instead.
  fraud_evaluations: collection<FraudEvaluationDoc>([
    { fields: ["livemode", "tx_id", "created_at", "id"] },
    { fields: ["livemode", "decision", "created_at", "id"] },
  ]),
  fraud_lists: collection<FraudListDoc>([{ fields: ["livemode", "kind", "created_at", "id"] }]),
  fraud_list_items: collection<FraudListItemDoc>([
    { fields: ["livemode", "match_key"] },
    { fields: ["list_id", "created_at", "id"] },
    { fields: ["list_value"], unique: true },
  ]),
  fraud_settings: collection<FraudSettingsDoc>([]),
  fraud_counters: collection<FraudCounterDoc>([{ fields: ["expires_at"] }]),
  fraud_merchant_stats: collection<FraudMerchantStatsDoc>([]),
  fraud_card_disputes: collection<FraudCardDisputesDoc>([]),
  fraud_merchant_disputes: collection<FraudMerchantDisputesDoc>([]),
};

/** The store as the fraud area sees it: its own collections and the kernel's (kernel/store.ts). */
export type FraudStore = AreaStore<typeof fraudCollections>;
export type FraudTx = AreaTx<typeof fraudCollections>;
export type FraudDocs = AreaDocs<typeof fraudCollections>;
