import { DomainError } from "../kernel/errors.ts";
import { stateMachine } from "../kernel/state-machine.ts";
import type { CashoutDoc, CashoutStatus } from "./records.ts";

// The cashout state machine (CashoutStatus in spec/resources/cashouts.tsp) and what a refused change says.

/**
 * The cashout state machine, the whole truth of a cashout's status: created pending; sent (in_transit) by
 * the payout job once its pending time is over; paid or failed by the rail; canceled only while pending.
 * A paid cashout fails later only when the destination's bank sends it back (the acquirer's report:
 * Adyen's PAIDOUT_REVERSED, payouts.ts acquirerOutcome); its amount returns to `available`. Anything else
 * is a 409 invalid_state_transition.
 */
export const CASHOUT_MACHINE = stateMachine<"cashout", CashoutStatus>("cashout", {
  initial: ["pending"],
  transitions: {
    pending: ["in_transit", "canceled", "failed"],
    in_transit: ["paid", "failed"],
    paid: ["failed"],
    failed: [],
    canceled: [],
  },
});

export type CashoutAction = "cancel" | "process";

export function refusal(cashout: CashoutDoc, action: CashoutAction): DomainError {
  return new DomainError(
    "invalid_state_transition",
    action === "cancel"
      ? `The cashout is ${cashout.status}: only pending cashouts can be canceled.`
      : `The cashout is ${cashout.status}: only pending or in_transit cashouts can be paid or failed.`,
  );
}

/** The fields every `cashout.*` event carries (spec/events/cashouts.tsp). */
export function eventFields(c: CashoutDoc) {
  return {
    cashout_id: c.id,
    merchant_id: c.merchant_id,
    amount: c.amount,
    currency: c.currency,
    status: c.status,
    destination_type: c.destination.type,
  };
}
