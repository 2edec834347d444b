import type { Caller } from "../kernel/caller.ts";
import { commit } from "../kernel/commit.ts";
import { invalid } from "../kernel/errors.ts";
import { recordEvent } from "../kernel/events.ts";
import { assertMinorUnits } from "../kernel/money.ts";
import type { ChargeContext } from "./context.ts";
import type { ChargeDoc } from "./records.ts";
import { eventFields, refusal } from "./state.ts";

// captureCharge and voidCharge (spec/resources/charges.tsp): an authorized charge is captured (in full or
// in part, once) or released.

export function captureAndVoid(ctx: ChargeContext) {
  const { store, now, processor } = ctx;
  return {
    async capture(caller: Caller, id: string, amount?: number): Promise<ChargeDoc> {
      // CaptureCharge.amount is MinorUnits; checked here too, for callers other than the HTTP layer.
      if (amount !== undefined) assertMinorUnits(amount, "amount");
      const charge = await ctx.load(caller.livemode, id);
      if (charge.status !== "authorized" || charge.review?.status === "open") throw refusal(charge, "capture");
      const toCapture = amount ?? charge.amount;
      if (toCapture > charge.amount) {
        throw invalid("amount", `must be at most the authorized amount (${charge.amount})`);
      }
      await processor.capture(charge.processor_ref ?? "", toCapture);
      await ctx.prepareCapture(charge);
      return commit(store, caller, async (tx) => {
        const captured = await ctx.transition(tx, charge, "captured", { amount_captured: toCapture }, "capture");
        await ctx.applyCapture(tx, captured, toCapture);
        return captured;
      });
    },

    async void(caller: Caller, id: string): Promise<ChargeDoc> {
      const charge = await ctx.load(caller.livemode, id);
      if (charge.status !== "authorized" || charge.review?.status === "open") throw refusal(charge, "void");
      await processor.void(charge.processor_ref ?? "");
      return commit(store, caller, async (tx) => {
        const voided = await ctx.transition(tx, charge, "voided", {}, "void");
        await recordEvent(tx, now, voided.livemode, "payment.voided", eventFields(voided));
        return voided;
      });
    },
  };
}
