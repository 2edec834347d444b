import type { Where } from "../../store/port.ts";
import type { ChargeDoc, ChargeStatus } from "../charges/records.ts";
import type { Clock } from "../kernel/clock.ts";
import { DomainError } from "../kernel/errors.ts";
import { recordEvent } from "../kernel/events.ts";
import type { Plain } from "../kernel/state-machine.ts";
import { iso } from "../kernel/time.ts";
import type { PaymentLinkDoc, PaymentLinkTx } from "./records.ts";

// How a payment link counts its payments (PaymentLink.uses / pending_uses / max_uses in
// spec/resources/payment-links.tsp). Every change here runs inside the transaction that creates or
// moves the linked charge, so the link's counts, the charge and the `payment_link.completed` event are
// one fact:
// - a charge made through the link that is captured takes a use (uses + 1); one pending (a local
//   payment awaiting the payer) or authorized (held) takes a pending use; a declined or blocked one
//   takes nothing;
// - a pending use becomes a use when its charge is captured, and is freed when it expires or is voided;
//   a charge waiting for 3-D Secure (requires_action) holds one too, freed if it is declined.
// `claimed` (uses + pending_uses) is raised only by a conditional increment `claimed < max_uses`, so no
// number of concurrent payers can take more than `max_uses`.

export function linkUnavailable(detail: string): DomainError {
  return new DomainError("payment_link_unavailable", detail);
}

function completedEvent(tx: PaymentLinkTx, clock: Clock, link: PaymentLinkDoc, charge: Plain<ChargeDoc>) {
  return recordEvent(tx, clock, charge.livemode, "payment_link.completed", {
    payment_link_id: link.id,
    tx_id: charge.id,
    merchant_id: charge.merchant_id,
    amount: charge.amount,
    currency: charge.currency,
    payment_method_type: charge.payment_method.type,
    uses: link.uses,
  });
}

/** Statuses of a new charge that hold a use of its link until they end. */
const HOLDING: readonly ChargeStatus[] = ["pending", "requires_action", "authorized"];

/**
 * Counts a charge just made through `link`, inside its transaction. Throws 409 `payment_link_unavailable`
 * (rolling the charge back) if the link was turned off, or its last use taken, since the payer's request
 * was checked.
 */
export async function claimUse(
  tx: PaymentLinkTx,
  clock: Clock,
  link: PaymentLinkDoc,
  charge: ChargeDoc,
): Promise<void> {
  const completed = charge.status === "captured";
  if (!completed && !HOLDING.includes(charge.status)) return;
  const expect: Where<PaymentLinkDoc> = { active: true };
  if (link.max_uses !== null) expect.claimed = { $lt: link.max_uses };
  const updated = await tx.update(
    "payment_links",
    link.id,
    {
      inc: completed ? { uses: 1, claimed: 1 } : { pending_uses: 1, claimed: 1 },
      set: { updated_at: iso(clock.now(link.livemode)) },
    },
    expect,
  );
  if (!updated) {
    throw linkUnavailable(
      "This payment link stopped taking payments while this one was being made; nothing was charged.",
    );
  }
  if (completed) await completedEvent(tx, clock, updated, charge);
}

/**
 * Follows a linked charge's transition `from` → `charge.status` (domain/charges/context.ts transition()), inside its
 * transaction: a held use becomes a use on capture, or is freed on expiry or void.
 */
export async function followTransition(
  tx: PaymentLinkTx,
  clock: Clock,
  from: ChargeStatus,
  charge: Plain<ChargeDoc>,
): Promise<void> {
  const linkId = charge.payment_link_id;
  if (!linkId || !HOLDING.includes(from)) return;
  const to = charge.status;
  // A held charge frees its use when declined: one waiting for 3-D Secure (the payer failed it, or the card
  // then declined), or one pending that the acquirer's notification refused (a local payment, or a card
  // Adyen took undecided: domain/charges/acquirer-outcomes.ts).
  const freed = to === "expired" || to === "voided" || to === "declined";
  if (to !== "captured" && !freed) return;
  const updated = await tx.update(
    "payment_links",
    linkId,
    {
      inc: to === "captured" ? { uses: 1, pending_uses: -1 } : { pending_uses: -1, claimed: -1 },
      set: { updated_at: iso(clock.now(charge.livemode)) },
    },
    { pending_uses: { $gte: 1 } },
  );
  // Every held use was counted when its charge was made: a missing one is a bug, not a payer's mistake.
  if (!updated) throw new Error(`payment link ${linkId} has no pending use for charge ${charge.id}`);
  if (to === "captured") await completedEvent(tx, clock, updated, charge);
}
