import type { components } from "@payments/contract/types";
import type { ChargeDoc, ChargeTx } from "./records.ts";

// The fraud-screening port charges depend on (spec: POST /v1/charges evaluates every charge before
// authorizing it). Charges, the consumer, declares it; the fraud area's engine implements it
// (fraud/evaluations.ts screen), so charges imports nothing of fraud and fraud imports this port; tests
// may supply another.

/** A charge about to be authorized, as the screen sees it. */
export interface ChargeAttempt {
  livemode: boolean;
  chargeId: string;
  merchantId: string;
  amount: number;
  currency: string;
  /** Card charges: the card number (only its BIN and test-card identity are read; never stored) and fingerprint. */
  card?: { pan: string; fingerprint: string } | undefined;
  customer?: { email?: string | undefined; ip?: string | undefined; country?: string | undefined } | null | undefined;
}

/** The evaluation of a charge attempt, not yet stored. */
export interface ChargeAssessment {
  evaluationId: string;
  decision: components["schemas"]["FraudDecision"];
  score: number;
  signals: string[];
  /** How long a review stays open in this environment (FraudSettings.review_window_seconds). */
  reviewWindowSeconds: number;
  /**
   * Writes the evaluation, its `fraud.evaluated` event and what the charge's outcome teaches the
   * rules (a decline; an accepted amount for the merchant's history) through the charge's own
   * transaction, so they commit with the charge or not at all.
   */
  record(tx: ChargeTx, charge: ChargeDoc): Promise<void>;
}

export interface FraudScreen {
  /** Evaluates a charge attempt before the processor is called; counts it for the velocity rules. */
  assessCharge(attempt: ChargeAttempt): Promise<ChargeAssessment>;
}
