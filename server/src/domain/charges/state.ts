import { DomainError } from "../kernel/errors.ts";
import type { ChargeDoc, ChargeStatus } from "./records.ts";

// The charge state machine (ChargeStatus in spec/resources/charges.tsp) and what a refused change says.

/** Every allowed transition. Anything else is a 409 invalid_state_transition. */
export const CHARGE_TRANSITIONS: Record<ChargeStatus, readonly ChargeStatus[]> = {
  pending: ["captured", "expired"],
  authorized: ["captured", "voided"],
  captured: ["partially_refunded", "refunded"],
  partially_refunded: ["partially_refunded", "refunded"],
  refunded: [],
  declined: [],
  blocked: [],
  voided: [],
  expired: [],
};

export function canTransition(from: ChargeStatus, to: ChargeStatus): boolean {
  return CHARGE_TRANSITIONS[from].includes(to);
}

export type ChargeAction = "capture" | "void" | "refund" | "complete" | "expire";

/** Why a transition is refused, in words an integrator can act on. */
export function refusal(charge: ChargeDoc, action: ChargeAction): DomainError {
  const s = charge.status;
  // spec: ChargeReview — while a review is open, only approve and reject act on the charge.
  if (charge.review?.status === "open" && (action === "capture" || action === "void")) {
    return new DomainError(
      "invalid_state_transition",
      `The charge is held for fraud review: ${action === "capture" ? "approve" : "reject"} the review instead.`,
    );
  }
  const why: Record<ChargeAction, string> = {
    capture:
      s === "captured" || s === "partially_refunded" || s === "refunded"
        ? `The charge is ${s}; a charge is captured once.`
        : s === "pending"
          ? "The charge is pending: a local payment is captured when the payer pays."
          : `A ${s} charge cannot be captured; only authorized ones can.`,
    void:
      s === "captured" || s === "partially_refunded"
        ? `A ${s} charge cannot be voided; refund it instead.`
        : `A ${s} charge cannot be voided; only authorized ones can.`,
    refund:
      s === "refunded"
        ? "The charge is already fully refunded."
        : s === "authorized"
          ? "An authorized charge has not been captured: void it instead of refunding."
          : `A ${s} charge cannot be refunded; only captured ones can.`,
    complete: `A ${s} charge cannot be completed; only pending ones can.`,
    expire: `A ${s} charge cannot expire; only pending ones can.`,
  };
  return new DomainError("invalid_state_transition", why[action]);
}

/** The fields every `payment.*` event carries (PaymentEventFields in spec/events/payments.tsp). */
export function eventFields(c: ChargeDoc) {
  return {
    tx_id: c.id,
    merchant_id: c.merchant_id,
    amount: c.amount,
    currency: c.currency,
    status: c.status,
    payment_method_type: c.payment_method.type,
  };
}
