import { commit } from "../kernel/commit.ts";
import { DomainError } from "../kernel/errors.ts";
import { recordEvent } from "../kernel/events.ts";
import { iso } from "../kernel/time.ts";
import { postCaptureReversal, postRefundReversal } from "../ledger/ledger.ts";
import type { ChargeContext } from "./context.ts";
import { acquirerKey, objectOfReference } from "./processor.ts";
import type { ChargeDoc, ChargeStatus, ChargeTx, RefundDoc } from "./records.ts";
import { CHARGE_MACHINE, eventFields, REFUND_MACHINE } from "./state.ts";
import { openReview } from "./three-d-secure-steps.ts";

// What an acquirer reports after the fact (its notifications: domain/acquirer-notifications), applied to
// charges and refunds. Each outcome is applied by the notification area exactly once: `alongside` marks its
// notification applied, and runs first inside the transaction of the change, so two deliveries of the same
// notification at once can never both change the charge (the second's mark finds it applied and rolls
// its transaction back).
//
// What each answers: `applied` (the change committed with the mark), `waiting` (the charge is not yet in
// the state the outcome follows: the outcome arrived before what it confirms, e.g. a CAPTURE before our
// capture's transaction committed; kept and tried again), `confirmed` (nothing to change: it confirms what
// is recorded), or `attention` (the acquirer contradicts what is recorded, which no rule here may undo on
// its own: logged for a person, as the recovery job logs an intent that no longer fits its charge).

export type OutcomeApplication = "applied" | "waiting" | "confirmed" | "attention";

/** Marks the notification applied inside the change's transaction (throws when it already is). */
export type Alongside = (tx: ChargeTx) => Promise<void>;

/** What the acquirer reports after the fact about charges and refunds (acquirerOutcomes). */
export interface ChargeAcquirerOutcomes {
  authorization(
    livemode: boolean,
    chargeId: string,
    outcome: { succeeded: boolean; reference: string; reason?: string | undefined },
    alongside: Alongside,
  ): Promise<OutcomeApplication>;
  /** `reference`: the charge, or our capture's or void's idempotency key (processor.ts objectOfReference). */
  modification(
    livemode: boolean,
    reference: string,
    kind: "capture" | "cancellation",
    succeeded: boolean,
    alongside: Alongside,
  ): Promise<OutcomeApplication>;
  /** `reference`: the refund, or its call's idempotency key (`re_…:refund`). */
  refund(livemode: boolean, reference: string, succeeded: boolean, alongside: Alongside): Promise<OutcomeApplication>;
  /**
   * A reversal's outcome (Adyen's CANCEL_OR_REFUND), named by the reversal's merchant reference (its
   * idempotency key, `<charge id>:reverse`).
   */
  reversal(livemode: boolean, merchantReference: string, succeeded: boolean): Promise<OutcomeApplication>;
}

/**
 * A refund the acquirer did not make after all: the refund `failed`, the charge's refunded total
 * lowered by its amount (conditionally: never below zero) and its status back to what that total says
 * (CHARGE_MACHINE: refunded or partially_refunded → partially_refunded or captured), the money back in
 * the merchant's `available` (ledger.ts postRefundReversal) and `payment.refund_failed`, in one
 * transaction.
 */
export async function refundFailed(
  ctx: ChargeContext,
  refund: RefundDoc,
  reason: string | undefined,
  alongside: Alongside,
): Promise<void> {
  const { store, clock } = ctx;
  const failure_message = `The acquirer reported that the refund failed after it was accepted${reason ? ` (${reason})` : ""}: the money did not reach the cardholder, and its amount is back in the merchant's available balance.`;
  await commit(store, null, async (tx) => {
    await alongside(tx);
    // Conditional on the status read: the notification's mark already makes this once; this is the last guard.
    const failed = await tx.update(
      "refunds",
      refund.id,
      { set: { status: REFUND_MACHINE.step(refund.status, "failed") } },
      { status: refund.status },
    );
    if (!failed) throw new DomainError("conflict", `Refund ${refund.id} changed meanwhile; applied again later.`);
    const lowered = await tx.update(
      "charges",
      refund.charge_id,
      { inc: { amount_refunded: -refund.amount }, set: { updated_at: iso(clock.now(refund.livemode)) } },
      { amount_refunded: { $gte: refund.amount } },
    );
    if (!lowered) throw new Error(`charge ${refund.charge_id} has less refunded than its refund ${refund.id}`);
    const status: ChargeStatus = lowered.amount_refunded === 0 ? "captured" : "partially_refunded";
    const after =
      lowered.status === status
        ? lowered
        : ((await tx.update(
            "charges",
            lowered.id,
            { set: { status: CHARGE_MACHINE.step(lowered.status, status) } },
            { status: lowered.status },
          )) ?? lowered);
    if (after.status !== lowered.status) ctx.reached(tx, after);
    await postRefundReversal(tx, clock, {
      livemode: refund.livemode,
      merchantId: refund.merchant_id,
      currency: refund.currency,
      refundId: refund.id,
      amount: refund.amount,
    });
    await recordEvent(tx, clock, refund.livemode, "payment.refund_failed", {
      ...eventFields(after),
      refund_id: refund.id,
      refund_amount: refund.amount,
      amount_refunded: after.amount_refunded,
      failure_message,
    });
  });
}

/**
 * A recorded capture the acquirer did not make (CAPTURE_FAILED, CAPTURE false): the charge goes
 * `captured` → `declined` with `failure_code: capture_failed`, nothing captured, its money taken back
 * (ledger.ts postCaptureReversal) and `payment.failed` sent, in one transaction. Only a charge with
 * nothing refunded or disputed is undone here: a refund or a chargeback on money the acquirer never
 * took is for a person to reconcile with it, as is a merchant whose balance no longer covers the credit
 * (balances never go below zero for this).
 */
async function captureFailed(ctx: ChargeContext, charge: ChargeDoc, alongside: Alongside): Promise<OutcomeApplication> {
  const { store, clock } = ctx;
  if (charge.status !== "captured" || charge.amount_refunded !== 0 || charge.dispute_id) return "attention";
  const failure_message =
    "The acquirer reported that the capture failed after it was accepted: the payment was not collected, and its amount was taken back from the merchant's balance.";
  try {
    await commit(store, null, async (tx) => {
      await alongside(tx);
      const failed = await ctx.transition(
        tx,
        charge,
        "declined",
        { amount_captured: 0, failure_code: "capture_failed", failure_message },
        "capture",
      );
      await postCaptureReversal(tx, clock, {
        livemode: failed.livemode,
        merchantId: failed.merchant_id,
        currency: failed.currency,
        chargeId: failed.id,
      });
      await recordEvent(tx, clock, failed.livemode, "payment.failed", {
        ...eventFields(failed),
        failure_code: "capture_failed",
        failure_message,
      });
    });
  } catch (err) {
    if (err instanceof DomainError && err.code === "insufficient_balance") return "attention";
    throw err;
  }
  return "applied";
}

/**
 * A card charge the acquirer took undecided (Adyen's Received/Pending, at creation or after 3-D Secure),
 * now authorized: as its request asked, captured in the same call (its authorize intent's `capture`) or
 * held `authorized`, with `payment.authorized` (and the capture's money and `payment.captured`), in one
 * transaction with the notification's mark. Without its intent (never expected) it is held: the merchant
 * captures it. A charge whose evaluation decided `review` (review_on_authorization: its authorization was
 * sent without capture) is held for review from now, as a card authorized at once is at creation
 * (ChargeReview: approve captures, reject or expiry voids).
 */
async function authorizeUndecided(ctx: ChargeContext, charge: ChargeDoc, alongside: Alongside): Promise<"applied"> {
  const intent = await ctx.store.get("acquirer_intents", acquirerKey(charge.id, "authorize"));
  const captured = intent?.capture === true;
  const pendingReview = charge.review_on_authorization;
  const at = ctx.clock.now(charge.livemode);
  // Held from now: the review's window starts when the authorization does (as after a 3-D Secure challenge).
  const held =
    pendingReview && !captured
      ? {
          ...openReview(iso(at), at, pendingReview.window_seconds, pendingReview.capture),
          review_on_authorization: null,
        }
      : {};
  if (captured) await ctx.prepareCapture(charge);
  await commit(ctx.store, null, async (tx) => {
    await alongside(tx);
    const done = await ctx.transition(
      tx,
      charge,
      captured ? "captured" : "authorized",
      { amount_captured: captured ? charge.amount : 0, ...held },
      "complete",
    );
    await recordEvent(tx, ctx.clock, done.livemode, "payment.authorized", {
      ...eventFields(done),
      status: "authorized",
    });
    if (captured) await ctx.applyCapture(tx, done, done.amount);
  });
  return "applied";
}

/**
 * The charge's authorization (or 3-D Secure completion, or local payment's start) that we reversed
 * ourselves: the recovery job's reversal of a call whose charge was never stored (create.ts
 * reverseUnrecorded, abandonUnrecorded for a direct debit), or of a challenge completed too late
 * (acquirer-challenge.ts). `abandoned`: a local payment's start whose charge was never stored and which
 * only its payer could complete (create.ts abandonUnrecorded). Null when there is none; `open` while that
 * intent is not resolved yet (its reversal may be on its way).
 */
async function ourReversal(ctx: ChargeContext, chargeId: string): Promise<"reversed" | "abandoned" | "open" | null> {
  for (const operation of ["authorize", "authenticate", "start_local"] as const) {
    const intent = await ctx.store.get("acquirer_intents", acquirerKey(chargeId, operation));
    if (!intent) continue;
    if (intent.state !== "resolved") return "open";
    if (intent.resolution === "reversed" || intent.resolution === "abandoned") return intent.resolution;
  }
  return null;
}

/**
 * Our own reversal confirmed (CANCEL_OR_REFUND true for `<charge id>:reverse`, the key create.ts and
 * acquirer-challenge.ts send it under): expected, logged at info. One whose intent is not resolved yet
 * waits for it. A refused reversal (money may still stand at the acquirer), or one we did not send,
 * needs a person (`attention`).
 */
async function reversal(
  ctx: ChargeContext,
  livemode: boolean,
  merchantReference: string,
  succeeded: boolean,
): Promise<OutcomeApplication> {
  const chargeId = objectOfReference(merchantReference, "reverse");
  if (chargeId === merchantReference) return "attention";
  const ours = await ourReversal(ctx, chargeId);
  if (ours === "open") return "waiting";
  if (ours !== "reversed" || !succeeded) return "attention";
  ctx.log.info?.(
    { charge: chargeId, livemode },
    "the acquirer confirmed our reversal of an authorization the ledger never recorded (the recovery of a call left in doubt)",
  );
  return "confirmed";
}

export function acquirerOutcomes(ctx: ChargeContext): ChargeAcquirerOutcomes {
  const { store, clock } = ctx;

  const { find } = ctx;

  return {
    /**
     * The acquirer's decision on a payment made elsewhere (a local method's payer paid, or never did):
     * a `pending` charge is captured (the merchant credited) or fails. Card payments are decided at
     * creation (or after 3-D Secure), so for them the notification confirms what is recorded.
     */
    async authorization(
      livemode: boolean,
      chargeId: string,
      outcome: { succeeded: boolean; reference: string; reason?: string | undefined },
      alongside: Alongside,
    ): Promise<OutcomeApplication> {
      const charge = await find(livemode, chargeId);
      if (!charge) {
        // An authorization whose charge was never stored, which we reversed (the recovery job, after a
        // crash or a call in doubt), or a local payment abandoned unpaid: nothing to change, and nothing
        // will come to wait for. Marked applied. An abandoned payment its payer paid anyway holds money no
        // charge records: a person refunds it.
        const ours = await ourReversal(ctx, chargeId);
        if (ours === "reversed" || (ours === "abandoned" && !outcome.succeeded)) {
          await commit(store, null, alongside);
          return "applied";
        }
        if (ours === "abandoned") return "attention";
        // Not stored yet: its creation has not committed (the payer paid before we recorded the charge).
        return "waiting";
      }
      if (charge.status === "requires_action") return "waiting";
      if (charge.status !== "pending") {
        const decided = charge.status !== "declined" && charge.status !== "blocked" && charge.status !== "expired";
        if (decided === outcome.succeeded) return "confirmed";
        // An authorization we reversed ourselves (a challenge's completion that came back after its charge
        // expired, acquirer-challenge.ts): expected, and nothing to change.
        return outcome.succeeded && (await ourReversal(ctx, chargeId)) === "reversed" ? "confirmed" : "attention";
      }
      if (outcome.succeeded && charge.payment_method.type === "card") return authorizeUndecided(ctx, charge, alongside);
      if (outcome.succeeded) {
        await ctx.prepareCapture(charge);
        await commit(store, null, async (tx) => {
          await alongside(tx);
          const captured = await ctx.transition(
            tx,
            charge,
            "captured",
            // The payment's reference at the acquirer becomes the charge's: its refunds are sent against it.
            { amount_captured: charge.amount, next_action: null, expires_at: null, processor_ref: outcome.reference },
            "complete",
          );
          await ctx.applyCapture(tx, captured, captured.amount);
        });
        return "applied";
      }
      const expired = /expire/i.test(outcome.reason ?? "");
      await commit(store, null, async (tx) => {
        await alongside(tx);
        if (expired) {
          const done = await ctx.transition(tx, charge, "expired", { next_action: null, expires_at: null }, "expire");
          await recordEvent(tx, clock, done.livemode, "payment.expired", eventFields(done));
          return;
        }
        const failure_message = `The payment was not completed: ${outcome.reason || "the acquirer refused it"}.`;
        // A card the acquirer took undecided and then refused is declined as a card: the issuer said no.
        const failure_code = charge.payment_method.type === "card" ? "card_declined" : "processing_error";
        const declined = await ctx.transition(
          tx,
          charge,
          "declined",
          { next_action: null, expires_at: null, failure_code, failure_message },
          "complete",
        );
        await recordEvent(tx, clock, declined.livemode, "payment.failed", {
          ...eventFields(declined),
          failure_code,
          failure_message,
        });
      });
      return "applied";
    },

    /**
     * A capture or a cancellation confirmed (or refused) by the acquirer. Ours was recorded when the
     * acquirer received it (a Confirmation `pending`): a success confirms it; an outcome that arrives
     * while our transaction has not committed waits for it. A capture refused after we recorded it
     * (CAPTURE false, or CAPTURE_FAILED: the scheme rejected it later) is undone: the charge is
     * `declined` with `capture_failed` and the capture's money taken back (captureFailed). A refused
     * cancellation of a recorded void contradicts it: a person reconciles it.
     */
    async modification(
      livemode: boolean,
      reference: string,
      kind: "capture" | "cancellation",
      succeeded: boolean,
      alongside: Alongside,
    ): Promise<OutcomeApplication> {
      // The connector sends our call's key as Adyen's reference: `tx_…:capture`, `tx_…:void` (issue 32:
      // read as a charge id, no such charge was ever found, and every confirmation stayed `waiting`).
      const charge = await find(livemode, objectOfReference(reference, kind === "capture" ? "capture" : "void"));
      if (!charge) return "waiting";
      const done =
        kind === "capture"
          ? charge.status === "captured" || charge.status === "partially_refunded" || charge.status === "refunded"
          : charge.status === "voided";
      if (done) {
        if (succeeded) return "confirmed";
        return kind === "capture" ? captureFailed(ctx, charge, alongside) : "attention";
      }
      // A capture undone already (its failure applied): a late confirmation or failure has nothing to add.
      if (kind === "capture" && charge.failure_code === "capture_failed") return "confirmed";
      if (charge.status === "authorized") {
        // Our call is on its way (its intent still open): its transaction has not committed yet.
        const intent = await store.get(
          "acquirer_intents",
          acquirerKey(charge.id, kind === "capture" ? "capture" : "void"),
        );
        if (intent && intent.state !== "resolved") return "waiting";
      }
      return succeeded ? "attention" : "confirmed";
    },

    /**
     * A refund confirmed by the acquirer: ours was recorded before the call; a success confirms it. One
     * refused (REFUND false) or failed afterwards (REFUND_FAILED) is undone (refundFailed); the other of
     * those two, or a late success after it, then has nothing to add.
     */
    async refund(
      livemode: boolean,
      reference: string,
      succeeded: boolean,
      alongside: Alongside,
    ): Promise<OutcomeApplication> {
      const refund = await store.get("refunds", objectOfReference(reference, "refund"));
      if (!refund || refund.livemode !== livemode) return "waiting";
      if (succeeded || refund.status === "failed") return "confirmed";
      await refundFailed(ctx, refund, undefined, alongside);
      return "applied";
    },

    reversal: (livemode, merchantReference, succeeded) => reversal(ctx, livemode, merchantReference, succeeded),
  };
}
