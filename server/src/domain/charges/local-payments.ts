import type { Caller } from "../kernel/caller.ts";
import { commit } from "../kernel/commit.ts";
import { sandboxOnly } from "../kernel/environment.ts";
import { DomainError } from "../kernel/errors.ts";
import { recordEvent } from "../kernel/events.ts";
import { iso } from "../kernel/time.ts";
import type { ChargeContext } from "./context.ts";
import type { ChargeDoc } from "./records.ts";
import { eventFields, refusal } from "./state.ts";

// Local payment methods (pix, boleto, oxxo, spei, sepa_debit): a charge waits `pending` for the payer,
// and is captured when they pay or expires when its next_action runs out. In the sandbox the helpers
// sandboxCompleteCharge and sandboxExpireCharge (spec/resources/sandbox.tsp) play the payer.
// The expiry also ends card charges left `requires_action` (3-D Secure, three-d-secure.ts) past their
// next_action's expires_at.

/** The statuses that wait for the payer until `expires_at`. */
const AWAITING_PAYER = ["pending", "requires_action"] as const;

export function localPayments(ctx: ChargeContext) {
  const { store, clock } = ctx;

  /** `caller` is null for the expiry job. */
  async function expireOne(charge: ChargeDoc, caller: Caller | null = null): Promise<ChargeDoc> {
    if (charge.status !== "pending" && charge.status !== "requires_action") throw refusal(charge, "expire");
    const expired = await commit(store, caller, async (tx) => {
      const done = await ctx.transition(tx, charge, "expired", { next_action: null }, "expire");
      await recordEvent(tx, clock, done.livemode, "payment.expired", eventFields(done));
      return done;
    });
    await ctx.eraseSingleUseToken(expired);
    return expired;
  }

  return {
    /** Sandbox: the payer pays a pending local payment. */
    async complete(caller: Caller, id: string): Promise<ChargeDoc> {
      sandboxOnly(caller.livemode, "charge", id);
      const charge = await ctx.load(caller.livemode, id);
      if (charge.status !== "pending") throw refusal(charge, "complete");
      await ctx.prepareCapture(charge);
      return commit(store, caller, async (tx) => {
        const captured = await ctx.transition(
          tx,
          charge,
          "captured",
          // The payment's reference at the acquirer becomes the charge's: its refunds are sent against it.
          {
            amount_captured: charge.amount,
            next_action: null,
            expires_at: null,
            processor_ref: charge.next_action?.reference ?? null,
          },
          "complete",
        );
        await ctx.applyCapture(tx, captured, captured.amount);
        return captured;
      });
    },

    /** Sandbox: the payer never pays (or never authenticates); the charge expires now. */
    async expire(caller: Caller, id: string): Promise<ChargeDoc> {
      sandboxOnly(caller.livemode, "charge", id);
      return expireOne(await ctx.load(caller.livemode, id), caller);
    },

    /**
     * The expiry job, for one environment: every pending or requires_action charge past its `expires_at` on that
     * environment's clock. Returns how many expired.
     */
    async expireDue(livemode: boolean, limit = 500): Promise<number> {
      const due = await store.findAll(
        "charges",
        { livemode, status: { $in: [...AWAITING_PAYER] }, expires_at: { $lte: iso(clock.now(livemode)) } },
        limit,
      );
      let expired = 0;
      for (const charge of due) {
        try {
          await expireOne(charge);
          expired++;
        } catch (err) {
          // Paid (or expired by another instance) meanwhile: nothing to do.
          if (!(err instanceof DomainError && err.code === "invalid_state_transition")) throw err;
        }
      }
      return expired;
    },

    /** When the environment's next pending charge expires after `after` (the sandbox clock's advance steps to it), or null. */
    async nextExpiry(livemode: boolean, after: Date): Promise<string | null> {
      const [next] = await store.findAll(
        "charges",
        { livemode, status: { $in: [...AWAITING_PAYER] }, expires_at: { $gt: iso(after) } },
        1,
        { by: "expires_at", direction: "asc" },
      );
      return next?.expires_at ?? null;
    },
  };
}
