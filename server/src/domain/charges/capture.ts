import type { Caller } from "../kernel/caller.ts";
import { commit } from "../kernel/commit.ts";
import { DomainError, invalid } from "../kernel/errors.ts";
import { recordEvent } from "../kernel/events.ts";
import { assertMinorUnits } from "../kernel/money.ts";
import type { ChargeContext } from "./context.ts";
import { acquirerKey } from "./processor.ts";
import type { AcquirerIntentDoc, ChargeDoc } from "./records.ts";
import { eventFields, refusal } from "./state.ts";

// captureCharge and voidCharge (spec/resources/charges.tsp): an authorized charge is captured (in full or
// in part, once) or released. Each call to the acquirer goes through its intent (intents.ts): a capture
// or void left in doubt by a crash is completed by a retry or by the recovery job (finishCapture,
// finishVoid), never sent twice.

export function captureAndVoid(ctx: ChargeContext) {
  const { store, clock } = ctx;

  /** The acquirer's reference of an authorized charge: every authorized charge has one. */
  const referenceOf = (charge: ChargeDoc) => {
    if (!charge.processor_ref) throw new Error(`authorized charge ${charge.id} has no acquirer reference`);
    return charge.processor_ref;
  };

  /** Sends the intent's capture (again, after a crash: same key) and commits it. `caller` is null for recovery. */
  async function finishCapture(intent: AcquirerIntentDoc, charge: ChargeDoc, caller: Caller | null) {
    await ctx.processorFor(charge.livemode).capture({
      idempotencyKey: intent.id,
      reference: referenceOf(charge),
      amount: intent.amount,
      currency: intent.currency,
    });
    await ctx.prepareCapture(charge);
    return commit(store, caller, async (tx) => {
      await ctx.intents.resolve(tx, intent, "committed");
      const captured = await ctx.transition(tx, charge, "captured", { amount_captured: intent.amount }, "capture");
      await ctx.applyCapture(tx, captured, intent.amount);
      return captured;
    });
  }

  /** Sends the intent's void (again, after a crash: same key) and commits it. */
  async function finishVoid(intent: AcquirerIntentDoc, charge: ChargeDoc, caller: Caller | null) {
    await ctx.processorFor(charge.livemode).void({ idempotencyKey: intent.id, reference: referenceOf(charge) });
    return commit(store, caller, async (tx) => {
      await ctx.intents.resolve(tx, intent, "committed");
      const voided = await ctx.transition(tx, charge, "voided", {}, "void");
      await recordEvent(tx, clock, voided.livemode, "payment.voided", eventFields(voided));
      return voided;
    });
  }

  const intentFor = (caller: Caller, charge: ChargeDoc, operation: "capture" | "void", amount: number) =>
    ctx.intents.open({
      livemode: charge.livemode,
      chargeId: charge.id,
      objectId: charge.id,
      operation,
      finish: operation,
      amount,
      currency: charge.currency,
      reference: charge.processor_ref,
      requestKey: caller.outcome?.key,
    });

  /**
   * A retry, with the same Idempotency-Key, of a capture or void whose request died after the acquirer
   * applied it and which the recovery job then completed: it gets the charge as that request would
   * have answered, not a 409 for a change it made itself. (Its answer is recorded in a transaction of
   * its own, as every keyed answer is.)
   */
  async function completedFor(caller: Caller, charge: ChargeDoc, operation: "capture" | "void") {
    const key = caller.outcome?.key;
    if (!key) return null;
    const intent = await store.get("acquirer_intents", acquirerKey(charge.id, operation));
    if (intent?.request_key !== key || intent.resolution !== "committed") return null;
    return commit(store, caller, async () => charge);
  }

  /**
   * The intent of this capture or void; when the recovery job is completing it this moment (its
   * request died), waits for that and answers from the outcome: the charge for a retry with the same
   * Idempotency-Key, else the refusal the changed charge gives.
   */
  async function openOrSettled(
    caller: Caller,
    charge: ChargeDoc,
    operation: "capture" | "void",
    amount: number,
  ): Promise<AcquirerIntentDoc | ChargeDoc> {
    try {
      return await intentFor(caller, charge, operation, amount);
    } catch (err) {
      return afterConflict(caller, charge, operation, err);
    }
  }

  /** A conflict with the recovery job over this charge's intent: its outcome, once it has one (above). */
  async function afterConflict(
    caller: Caller,
    charge: ChargeDoc,
    operation: "capture" | "void",
    err: unknown,
  ): Promise<ChargeDoc> {
    if (!(err instanceof DomainError && err.code === "conflict")) throw err;
    await ctx.intents.settled(acquirerKey(charge.id, operation));
    const current = await ctx.load(charge.livemode, charge.id);
    const completed = await completedFor(caller, current, operation);
    if (completed) return completed;
    throw current.status === "authorized" ? err : refusal(current, operation);
  }

  return {
    finishCapture,
    finishVoid,

    async capture(caller: Caller, id: string, amount?: number): Promise<ChargeDoc> {
      // CaptureCharge.amount is MinorUnits; checked here too, for callers other than the HTTP layer.
      if (amount !== undefined) assertMinorUnits(amount, "amount");
      ctx.processorFor(caller.livemode);
      const charge = await ctx.load(caller.livemode, id);
      if (charge.status !== "authorized" || charge.review?.status === "open") {
        const completed = await completedFor(caller, charge, "capture");
        if (completed) return completed;
        throw refusal(charge, "capture");
      }
      const toCapture = amount ?? charge.amount;
      if (toCapture > charge.amount) {
        throw invalid("amount", `must be at most the authorized amount (${charge.amount})`);
      }
      // A capture already sent for this charge and left in doubt is completed as it was sent (its amount):
      // the acquirer may have captured it.
      const intent = await openOrSettled(caller, charge, "capture", toCapture);
      if (!("operation" in intent)) return intent;
      return finishCapture(intent, charge, caller).catch((err) => afterConflict(caller, charge, "capture", err));
    },

    async void(caller: Caller, id: string): Promise<ChargeDoc> {
      ctx.processorFor(caller.livemode);
      const charge = await ctx.load(caller.livemode, id);
      if (charge.status !== "authorized" || charge.review?.status === "open") {
        const completed = await completedFor(caller, charge, "void");
        if (completed) return completed;
        throw refusal(charge, "void");
      }
      const intent = await openOrSettled(caller, charge, "void", 0);
      if (!("operation" in intent)) return intent;
      return finishVoid(intent, charge, caller).catch((err) => afterConflict(caller, charge, "void", err));
    },
  };
}
