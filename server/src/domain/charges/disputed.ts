import { DomainError } from "../kernel/errors.ts";
import type { ChargeDoc, ChargeStatus, ChargeTx } from "./records.ts";

// A charge's side of a dispute (the disputes area's DisputedCharges port, disputes/disputes.ts): which
// charges can be disputed, and the claim a dispute puts on its charge, written here because the charge
// is this area's record. The claim is conditional (the charge still captured, its refunded total what
// the opening read, no chargeback yet), and a refund's own update requires `chargeback_id: null`
// (refunds.ts): a refund and a chargeback's opening racing never both succeed, so the cardholder is
// never paid back twice.

/** The charge statuses a dispute can be opened on: captured money not all refunded. */
const DISPUTABLE: ChargeStatus[] = ["captured", "partially_refunded"];

/** Why a charge cannot be disputed now, in words; null when it can. */
export function notDisputable(charge: ChargeDoc): DomainError | null {
  if (charge.dispute_id) {
    return new DomainError("invalid_state_transition", `The charge already has a dispute (${charge.dispute_id}).`);
  }
  if (!DISPUTABLE.includes(charge.status)) {
    return new DomainError(
      "invalid_state_transition",
      charge.status === "refunded"
        ? "The charge is fully refunded: there is nothing left to dispute."
        : `A ${charge.status} charge cannot be disputed; only captured ones can.`,
    );
  }
  return null;
}

/**
 * Claims the charge for a dispute inside the dispute's transaction `tx`: conditional on it still being
 * captured, with the refunded total `read` saw and no chargeback, so a concurrent refund and this opening
 * cannot both succeed. `first` (the dispute's opening) also requires no dispute yet and records it;
 * otherwise (an inquiry escalated) only the chargeback is recorded.
 */
export async function claimForDispute(
  tx: ChargeTx,
  read: ChargeDoc,
  disputeId: string,
  chargeback: boolean,
  first: boolean,
): Promise<void> {
  const claimed = await tx.update(
    "charges",
    read.id,
    {
      set: first
        ? { dispute_id: disputeId, chargeback_id: chargeback ? disputeId : null }
        : { chargeback_id: disputeId },
    },
    {
      status: { $in: DISPUTABLE },
      amount_refunded: read.amount_refunded,
      chargeback_id: null,
      ...(first ? { dispute_id: null } : {}),
    },
  );
  if (claimed) return;
  // A refund (or another dispute) got there first: say what holds now.
  const current = (await tx.get("charges", read.id)) ?? read;
  throw (
    (first ? notDisputable(current) : null) ??
    new DomainError(
      "conflict",
      "The charge changed while the dispute was being opened (a refund was made meanwhile); try again.",
    )
  );
}

/** A chargeback won: the cardholder's bank gave the money back, so the charge may be refunded again. */
export async function releaseChargeback(tx: ChargeTx, chargeId: string, disputeId: string): Promise<void> {
  await tx.update("charges", chargeId, { set: { chargeback_id: null } }, { chargeback_id: disputeId });
}
