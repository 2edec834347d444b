import type { components } from "@payments/contract/types";
import type { Page, PageResult } from "../../store/port.ts";
import type { Caller } from "../kernel/caller.ts";
import { commit } from "../kernel/commit.ts";
import { DomainError } from "../kernel/errors.ts";
import { recordEvent } from "../kernel/events.ts";
import { newId } from "../kernel/ids.ts";
import { assertMinorUnits } from "../kernel/money.ts";
import { postRefund } from "../ledger/ledger.ts";
import { refundFailed } from "./acquirer-outcomes.ts";
import type { ChargeContext } from "./context.ts";
import { refusedRepeat } from "./intents.ts";
import type { AcquirerIntentDoc, ChargeDoc, ChargeStatus, RefundDoc } from "./records.ts";
import { CHARGE_MACHINE, eventFields, REFUND_MACHINE, refusal } from "./state.ts";

// createRefund and listRefunds (spec/resources/charges.tsp): a captured charge is refunded in part or in
// full, never past what was captured, and the money comes back out of the merchant's balance.

/** createRefund's body (the contract's RefundCreate). */
export type RefundCreate = components["schemas"]["RefundCreate"];

function exceedsRefundable(charge: ChargeDoc, amount: number): DomainError {
  const left = charge.amount_captured - charge.amount_refunded;
  return new DomainError(
    "refund_exceeds_remaining",
    `The refund of ${amount} exceeds what is left to refund (${left} of ${charge.amount_captured} captured).`,
    { param: "amount" },
  );
}

/** A charge a chargeback holds is not refunded (Dispute.is_charge_refundable, spec/resources/disputes.tsp). */
function disputedRefusal(disputeId: string): DomainError {
  return new DomainError(
    "invalid_state_transition",
    `The charge is disputed (${disputeId}): the cardholder's bank has taken the money back, so it cannot be refunded; answer the dispute instead.`,
  );
}

export function refunds(ctx: ChargeContext) {
  const { store, clock } = ctx;

  /**
   * Sends a committed refund's call (again, after a crash: same key) and resolves its intent. A refund
   * the acquirer takes is `succeeded` at once; one it reports failed (later by notification, or at once
   * for the sandbox's refund-failure test card) becomes `failed` (acquirer-outcomes.ts refundFailed).
   */
  async function sendRefund(intent: AcquirerIntentDoc): Promise<void> {
    // A local payment completed before its reference was kept on the charge has none: its charge id stands in.
    const reference = intent.reference ?? intent.charge_id;
    const answer = await ctx.processorFor(intent.livemode).refund({
      idempotencyKey: intent.id,
      reference,
      amount: intent.amount,
      currency: intent.currency,
    });
    // Refused as a request on a repeat: what the first call did is unknown (it may have refunded), so the
    // intent stays in doubt, as an authorization's does (intents.ts refusedRepeat); its REFUND
    // notification settles the refund if the first call took it.
    if (answer.status === "failed" && answer.requestRefused && intent.attempts > 1) throw refusedRepeat(intent);
    await ctx.intents.resolveAlone(intent, "committed");
    // Taken, then failed (the sandbox's refund-failure test card), or refused at its first call (Adyen's
    // 4xx): undone as a REFUND_FAILED would be,
    // once (the refund's conditional status change; a resend after a crash finds it failed).
    if (answer.status === "failed" && intent.refund_id) {
      const refund = await store.get("refunds", intent.refund_id);
      if (refund?.status === "succeeded") await refundFailed(ctx, refund, answer.reason, async () => {});
    }
  }

  return {
    /**
     * Refunds part or all of what is left. The charge's refunded total is raised with a conditional
     * increment (never past the captured amount) and the merchant's available balance lowered with a
     * conditional decrement (never below zero), in one transaction: concurrent refunds can only ever
     * add up to the captured amount.
     */
    async refund(caller: Caller, id: string, input: RefundCreate): Promise<RefundDoc> {
      // CreateRefund.amount is MinorUnits: a zero or negative refund would credit the merchant.
      if (input.amount !== undefined) assertMinorUnits(input.amount, "amount");
      ctx.processorFor(caller.livemode);
      const charge = await ctx.load(caller.livemode, id);
      if (charge.status !== "captured" && charge.status !== "partially_refunded") throw refusal(charge, "refund");
      if (charge.chargeback_id) throw disputedRefusal(charge.chargeback_id);
      const left = charge.amount_captured - charge.amount_refunded;
      const amount = input.amount ?? left;
      if (amount > left) throw exceedsRefundable(charge, amount);
      const at = clock.createdAt(caller.livemode);
      const refund: RefundDoc = {
        id: newId("re"),
        livemode: charge.livemode,
        created_at: at,
        charge_id: charge.id,
        merchant_id: charge.merchant_id,
        amount,
        currency: charge.currency,
        status: REFUND_MACHINE.start("succeeded"),
        reason: input.reason ?? null,
        metadata: input.metadata ?? {},
      };
      // The refund's call to the acquirer is an intent written with the refund (intents.ts): if the call
      // below never happens or ends in doubt, the recovery job sends it (again, under the same key).
      const intent = ctx.intents.build({
        livemode: charge.livemode,
        chargeId: charge.id,
        objectId: refund.id,
        operation: "refund",
        finish: "refund",
        amount,
        currency: charge.currency,
        reference: charge.processor_ref,
        refundId: refund.id,
      });
      await commit(store, caller, async (tx) => {
        await tx.insert("acquirer_intents", intent);
        const raised = await tx.update(
          "charges",
          charge.id,
          { inc: { amount_refunded: amount }, set: { updated_at: at } },
          {
            status: { $in: ["captured", "partially_refunded"] },
            amount_refunded: { $lte: charge.amount_captured - amount },
            // A chargeback opened meanwhile wins: the cardholder has the money back already (domain/disputes).
            chargeback_id: null,
          },
        );
        if (!raised) {
          // A concurrent refund (or another change) got there first: say which limit now applies.
          const current = (await tx.get("charges", charge.id)) ?? charge;
          if (current.chargeback_id) throw disputedRefusal(current.chargeback_id);
          throw current.status === "captured" || current.status === "partially_refunded"
            ? exceedsRefundable(current, amount)
            : refusal(current, "refund");
        }
        const status: ChargeStatus =
          raised.amount_refunded === raised.amount_captured ? "refunded" : "partially_refunded";
        // Its refunded total decides the status it moves to (CHARGE_MACHINE: captured or
        // partially_refunded → partially_refunded or refunded).
        const after =
          (await tx.update("charges", charge.id, { set: { status: CHARGE_MACHINE.step(raised.status, status) } })) ??
          raised;
        if (raised.status !== status) ctx.reached(tx, after);
        // The money comes first from this charge's own capture credit if it has not settled yet
        // (production), then from `available` (ledger.ts postRefund).
        await postRefund(tx, clock, {
          livemode: charge.livemode,
          merchantId: charge.merchant_id,
          currency: charge.currency,
          chargeId: charge.id,
          refundId: refund.id,
          amount,
        });
        await tx.insert("refunds", refund);
        await recordEvent(tx, clock, charge.livemode, "payment.refunded", {
          ...eventFields(after),
          refund_id: refund.id,
          refund_amount: amount,
          amount_refunded: after.amount_refunded,
        });
        return refund;
      });
      try {
        await sendRefund(intent);
      } catch (err) {
        // Committed, answered, and completed later by the recovery job: the caller's refund stands.
        ctx.log.warn(
          { err, refund: refund.id },
          "a refund's call to the acquirer is in doubt; recovery will resend it",
        );
      }
      return refund;
    },

    sendRefund,

    async listRefunds(caller: Caller, id: string, page: Page): Promise<PageResult<RefundDoc>> {
      await ctx.load(caller.livemode, id);
      return store.list("refunds", { livemode: caller.livemode, charge_id: id }, page);
    },
  };
}
