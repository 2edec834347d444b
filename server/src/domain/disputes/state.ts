import { DomainError } from "../kernel/errors.ts";
import { stateMachine } from "../kernel/state-machine.ts";
import type { DisputeDoc, DisputeStatus } from "./records.ts";

// The dispute state machine (DisputeStatus in spec/resources/disputes.tsp) and what a refused change says.

/**
 * The dispute state machine, the whole truth of a dispute's status. An inquiry starts
 * `warning_needs_response`; submitting evidence moves it to `warning_under_review`; it ends
 * `warning_closed` (accepted, deadline passed, or decided for the merchant) unless the bank escalates it
 * into a chargeback (`needs_response`). A chargeback starts `needs_response`; submitting evidence moves it
 * to `under_review`; it ends `won` or `lost` (accepting it or letting its deadline pass loses it; the
 * sandbox's bank may decide before evidence arrives). A decided chargeback is decided again only by the
 * card networks, as the acquirer reports it (acquirer-outcomes.ts): `won` → `lost` (the issuer's second
 * chargeback, pre-arbitration) and `lost` → `won` (the chargeback reversed after all). Anything else is a
 * 409 invalid_state_transition.
 */
export const DISPUTE_MACHINE = stateMachine<"dispute", DisputeStatus>("dispute", {
  initial: ["warning_needs_response", "needs_response"],
  transitions: {
    warning_needs_response: ["warning_under_review", "warning_closed", "needs_response"],
    warning_under_review: ["warning_closed", "needs_response"],
    warning_closed: [],
    needs_response: ["under_review", "won", "lost"],
    under_review: ["won", "lost"],
    won: ["lost"],
    lost: ["won"],
  },
});

/** A dispute that still waits for the merchant's evidence (updateDispute and closeDispute accept only these). */
export const NEEDS_RESPONSE: readonly DisputeStatus[] = ["warning_needs_response", "needs_response"];

/** A dispute's final statuses: `closed_at` is set when it reaches one, and `dispute.closed` is recorded. */
export const CLOSED: readonly DisputeStatus[] = ["warning_closed", "won", "lost"];

/** An inquiry's statuses: no money has moved for it. */
export const INQUIRY: readonly DisputeStatus[] = ["warning_needs_response", "warning_under_review", "warning_closed"];

/**
 * Whether the disputed charge may still be refunded (Dispute.is_charge_refundable): during an inquiry,
 * and after a chargeback is won; never while a chargeback runs or once it is lost (the cardholder already
 * has the money back: a refund would pay them twice).
 */
export function chargeRefundable(status: DisputeStatus): boolean {
  return INQUIRY.includes(status) || status === "won";
}

export type DisputeAction = "update" | "close" | "resolve";

export function refusal(dispute: Pick<DisputeDoc, "status">, action: DisputeAction): DomainError {
  const s = dispute.status;
  const why: Record<DisputeAction, string> = {
    update: `The dispute is ${s}: evidence can be changed or submitted only while it needs a response.`,
    close: `The dispute is ${s}: only a dispute that needs a response can be accepted.`,
    resolve: `The dispute is ${s}: it has already been decided.`,
  };
  return new DomainError("invalid_state_transition", why[action]);
}

/** The fields every `dispute.*` event carries (DisputeEventFields in spec/events/disputes.tsp). */
export function eventFields(d: DisputeDoc) {
  return {
    dispute_id: d.id,
    charge_id: d.charge_id,
    merchant_id: d.merchant_id,
    amount: d.amount,
    currency: d.currency,
    reason: d.reason,
    status: d.status,
  };
}
