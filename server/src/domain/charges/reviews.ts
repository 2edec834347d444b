import type { Caller } from "../kernel/caller.ts";
import { commit } from "../kernel/commit.ts";
import { DomainError, notFound } from "../kernel/errors.ts";
import { recordEvent } from "../kernel/events.ts";
import { iso } from "../kernel/time.ts";
import type { ChargeContext } from "./context.ts";
import type { AcquirerIntentDoc, ChargeDoc, ChargeReviewDoc, ChargeTx, IntentFinish } from "./records.ts";
import { CHARGE_MACHINE, eventFields, REVIEW_MACHINE } from "./state.ts";

// Charges held for fraud review (ChargeReview in spec/resources/charges.tsp): authorized, not captured,
// until approved (captured), rejected (voided) or left open past its window (voided by the expiry job).

export function reviews(ctx: ChargeContext) {
  const { store, clock } = ctx;

  /** 409 unless the charge is authorized with an open review. */
  function assertOpenReview(charge: ChargeDoc): ChargeReviewDoc {
    if (charge.status !== "authorized" || charge.review?.status !== "open") {
      throw new DomainError(
        "invalid_state_transition",
        charge.review ? `The charge's review is ${charge.review.status}, not open.` : "The charge has no open review.",
      );
    }
    return charge.review;
  }

  /**
   * Closes an open review (approve, reject, expiry), conditional on the charge still being authorized
   * with that review open: of a concurrent approve, reject and expiry, exactly one wins; the others get
   * a 409 (the expiry job skips).
   */
  async function closeReview(
    tx: ChargeTx,
    charge: ChargeDoc,
    review: ChargeReviewDoc,
    outcome: "approved" | "rejected" | "expired",
    set: Partial<ChargeDoc>,
  ): Promise<ChargeDoc> {
    const at = iso(clock.now(charge.livemode));
    const updated = await tx.update(
      "charges",
      charge.id,
      {
        set: {
          ...set,
          review: { ...review, status: REVIEW_MACHINE.step(review.status, outcome), closed_at: at },
          review_expires_at: null,
          updated_at: at,
        },
      },
      { status: "authorized", review_expires_at: review.expires_at },
    );
    if (!updated) {
      const current = await tx.get("charges", charge.id);
      if (!current) throw notFound("charge", charge.id);
      assertOpenReview(current);
      throw new DomainError("conflict", "The charge changed while its review was being closed; retry.");
    }
    await ctx.onTransition(tx, charge.status, updated);
    return updated;
  }

  /** A held charge's capture or void, as an intent (intents.ts): one per charge and operation. */
  const intentFor = (charge: ChargeDoc, operation: "capture" | "void", finish: IntentFinish) =>
    ctx.intents.open({
      livemode: charge.livemode,
      chargeId: charge.id,
      objectId: charge.id,
      operation,
      finish,
      amount: operation === "capture" ? charge.amount : 0,
      currency: charge.currency,
      reference: charge.processor_ref,
    });

  /** Voids a held charge whose review was rejected or expired (`caller` is null for the expiry job). */
  async function voidHeld(
    charge: ChargeDoc,
    outcome: "rejected" | "expired",
    caller: Caller | null,
  ): Promise<ChargeDoc> {
    assertOpenReview(charge);
    return finishVoidHeld(
      await intentFor(charge, "void", `${outcome === "rejected" ? "reject" : "expire"}_review`),
      charge,
      caller,
    );
  }

  /** Sends the intent's void (again, after a crash: same key) and commits it with the review closed. */
  async function finishVoidHeld(intent: AcquirerIntentDoc, charge: ChargeDoc, caller: Caller | null) {
    const review = assertOpenReview(charge);
    const outcome = intent.finish === "reject_review" ? "rejected" : "expired";
    await ctx.processorFor(charge.livemode).void({ idempotencyKey: intent.id, reference: charge.processor_ref ?? "" });
    return commit(store, caller, async (tx) => {
      await ctx.intents.resolve(tx, intent, "committed");
      const voided = await closeReview(tx, charge, review, outcome, {
        status: CHARGE_MACHINE.step(charge.status, "voided"),
      });
      await recordEvent(tx, clock, voided.livemode, "payment.voided", eventFields(voided));
      return voided;
    });
  }

  /** Sends the intent's capture (again, after a crash: same key) and commits it with the review approved. */
  async function finishApproval(intent: AcquirerIntentDoc, charge: ChargeDoc, caller: Caller | null) {
    const review = assertOpenReview(charge);
    await ctx.processorFor(charge.livemode).capture({
      idempotencyKey: intent.id,
      reference: charge.processor_ref ?? "",
      amount: intent.amount,
      currency: intent.currency,
    });
    await ctx.prepareCapture(charge);
    return commit(store, caller, async (tx) => {
      await ctx.intents.resolve(tx, intent, "committed");
      const captured = await closeReview(tx, charge, review, "approved", {
        status: CHARGE_MACHINE.step(charge.status, "captured"),
        amount_captured: intent.amount,
      });
      await ctx.applyCapture(tx, captured, intent.amount);
      return captured;
    });
  }

  return {
    finishApproval,
    finishVoidHeld,

    /**
     * Approves a charge held for review (spec: approveChargeReview): captured, unless it was created
     * with `capture: false`, when it stays authorized for a later capture.
     */
    async approveReview(caller: Caller, id: string): Promise<ChargeDoc> {
      ctx.processorFor(caller.livemode);
      const charge = await ctx.load(caller.livemode, id);
      const review = assertOpenReview(charge);
      if (!review.capture) {
        return commit(store, caller, (tx) => closeReview(tx, charge, review, "approved", {}));
      }
      return finishApproval(await intentFor(charge, "capture", "approve_review"), charge, caller);
    },

    /** Rejects a charge held for review (spec: rejectChargeReview): voided; nothing was captured, nothing is refunded. */
    async rejectReview(caller: Caller, id: string): Promise<ChargeDoc> {
      ctx.processorFor(caller.livemode);
      return voidHeld(await ctx.load(caller.livemode, id), "rejected", caller);
    },

    /**
     * The review-expiry job, for one environment: every open review past its `expires_at` on that
     * environment's clock is voided. Returns how many.
     */
    async expireReviewsDue(livemode: boolean, limit = 500): Promise<number> {
      const due = await store.findAll(
        "charges",
        { livemode, review_expires_at: { $lte: iso(clock.now(livemode)) } },
        limit,
      );
      let expired = 0;
      for (const charge of due) {
        try {
          await voidHeld(charge, "expired", null);
          expired++;
        } catch (err) {
          // Approved, rejected or expired by another instance meanwhile: nothing to do.
          if (!(err instanceof DomainError && (err.code === "invalid_state_transition" || err.code === "conflict"))) {
            throw err;
          }
        }
      }
      return expired;
    },

    /** When the environment's next open review expires after `after`, or null. */
    async nextReviewExpiry(livemode: boolean, after: Date): Promise<string | null> {
      const [next] = await store.findAll("charges", { livemode, review_expires_at: { $gt: iso(after) } }, 1, {
        by: "review_expires_at",
        direction: "asc",
      });
      return next?.review_expires_at ?? null;
    },
  };
}
