import { DomainError } from "../kernel/errors.ts";
import { stateMachine } from "../kernel/state-machine.ts";
import type { ChargeDoc, ChargeStatus, RefundStatus, ReviewStatus } from "./records.ts";

// The charge state machine (ChargeStatus in spec/resources/charges.tsp) and what a refused change says.

/**
 * The charge state machine, the whole truth of a charge's status. A new charge is created in its
 * outcome: `pending` (a local method waits for the payer), `requires_action` (a card waits for the
 * payer's 3-D Secure challenge), `authorized` (held for review or
 * `capture: false`), `captured`, `declined` (by the processor) or `blocked` (by fraud evaluation). Any
 * other change is a 409 invalid_state_transition.
 */
export const CHARGE_MACHINE = stateMachine<"charge", ChargeStatus>("charge", {
  initial: ["pending", "requires_action", "authorized", "captured", "declined", "blocked"],
  transitions: {
    // A local payment the payer pays (captured), never pays (expired), or the acquirer refuses (declined:
    // its notification says so, acquirer-outcomes.ts). A card payment the acquirer took undecided (Adyen's
    // Received/Pending) is authorized or captured, as its request asked, or declined by that notification.
    pending: ["authorized", "captured", "expired", "declined"],
    // 3-D Secure (three-d-secure.ts): the payer's answer authorizes (and captures) or declines the
    // charge; no answer in time expires it. An acquirer that takes the completion undecided (Adyen's
    // Received/Pending from /payments/details) leaves it pending: its AUTHORISATION decides it.
    requires_action: ["pending", "authorized", "captured", "declined", "expired"],
    authorized: ["captured", "voided"],
    // A capture the acquirer reports failed after it was recorded is undone (acquirer-outcomes.ts).
    captured: ["partially_refunded", "refunded", "declined"],
    // A refund the acquirer reports failed gives its amount back to the charge (acquirer-outcomes.ts).
    partially_refunded: ["partially_refunded", "refunded", "captured"],
    refunded: ["partially_refunded", "captured"],
    declined: [],
    blocked: [],
    voided: [],
    expired: [],
  },
});

/** A fraud review (ChargeReview): opened at creation, closed once, by approval, rejection or expiry. */
export const REVIEW_MACHINE = stateMachine<"review", ReviewStatus>("review", {
  initial: ["open"],
  transitions: { open: ["approved", "rejected", "expired"], approved: [], rejected: [], expired: [] },
});

/**
 * A refund (Refund in spec/resources/charges.tsp) is recorded once it succeeded; it changes only when the
 * acquirer reports it failed afterwards (acquirer-outcomes.ts), and then never again.
 */
export const REFUND_MACHINE = stateMachine<"refund", RefundStatus>("refund", {
  initial: ["succeeded"],
  transitions: { succeeded: ["failed"], failed: [] },
});

/** Every allowed transition of a charge. */
export const CHARGE_TRANSITIONS = CHARGE_MACHINE.transitions;

export function canTransition(from: ChargeStatus, to: ChargeStatus): boolean {
  return CHARGE_MACHINE.can(from, to);
}

export type ChargeAction = "capture" | "void" | "refund" | "complete" | "expire" | "authenticate";

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
          : s === "requires_action"
            ? "The charge waits for the payer's 3-D Secure authentication (next_action); it can be captured once authorized."
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
    expire: `A ${s} charge cannot expire; only pending and requires_action ones can.`,
    authenticate: `A ${s} charge has no 3-D Secure challenge to answer; only requires_action ones have.`,
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
