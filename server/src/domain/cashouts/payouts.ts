import type { Caller } from "../kernel/caller.ts";
import { commit } from "../kernel/commit.ts";
import { sandboxOnly } from "../kernel/environment.ts";
import { DomainError } from "../kernel/errors.ts";
import { recordEvent } from "../kernel/events.ts";
import { tryTransition } from "../kernel/state-machine.ts";
import { iso } from "../kernel/time.ts";
import { postCashoutPaid, postCashoutReturn } from "../ledger/ledger.ts";
import type { CashoutContext } from "./context.ts";
import { FAILURE_MESSAGES, PayoutRefused, type PayoutRequest } from "./payout-rail.ts";
import type { CashoutDoc, CashoutFailureCode, CashoutTx } from "./records.ts";
import { CASHOUT_MACHINE, eventFields, refusal } from "./state.ts";

// A cashout's way out: the payout job sends pending cashouts to the payout rail (an outside call, never
// inside a store transaction) once their pending time is over, and later records what became of them;
// in the sandbox, sandboxPayCashout and sandboxFailCashout (spec/resources/cashouts.tsp) do it at once.

/**
 * The failure code a returned payout is shown with: what the bank's reason says when it says it (Adyen's
 * `reason` is free text), else `otherwise` (for a return, `declined`: the bank refused the credit).
 */
export function returnCode(reason: string | undefined, otherwise: CashoutFailureCode = "declined"): CashoutFailureCode {
  if (reason && /closed/i.test(reason)) return "account_closed";
  if (reason && /(no|unknown|invalid) (such )?account|account (not found|unknown|does not exist)/i.test(reason)) {
    return "no_account";
  }
  return otherwise;
}

/**
 * The failure code of a payout the acquirer did not pay: a reviewer's decline is `declined`; a failed
 * payout says why when its reason does (Adyen's "Account closed"); an expired one, or a failure without a
 * telling reason, could not be processed.
 */
function payoutFailureCode(status: "failed" | "declined" | "expired", reason: string | undefined): CashoutFailureCode {
  if (status === "declined") return "declined";
  return status === "failed" ? returnCode(reason, "could_not_process") : "could_not_process";
}

/**
 * paid → failed: the destination's bank sent a paid cashout back (PAIDOUT_REVERSED). Its amount leaves
 * `cashouts:paid_out` for the merchant's `available` and `cashout.failed` says why, in one transaction.
 */
function markReturned(
  ctx: CashoutContext,
  cashout: CashoutDoc,
  reason: string | undefined,
  alongside: (tx: CashoutTx) => Promise<void>,
) {
  const { store, clock, transition } = ctx;
  const code = returnCode(reason);
  const message = `The destination's bank sent the paid cashout back; its amount is available again${reason ? ` (${reason})` : ""}. ${FAILURE_MESSAGES[code]}`;
  return commit(store, null, async (tx) => {
    await alongside(tx);
    const failed = await transition(
      tx,
      cashout,
      "failed",
      {
        failure_code: code,
        failure_message: message,
        next_step_at: null,
        returned_at: iso(clock.now(cashout.livemode)),
      },
      "process",
    );
    await postCashoutReturn(tx, clock, {
      livemode: failed.livemode,
      merchantId: failed.merchant_id,
      currency: failed.currency,
      cashoutId: failed.id,
      amount: failed.amount,
    });
    await recordEvent(tx, clock, failed.livemode, "cashout.failed", {
      ...eventFields(failed),
      failure_code: code,
      failure_message: message,
    });
    return failed;
  });
}

/**
 * A payout outcome for a cashout no longer in transit (acquirerOutcome): a return of a paid one fails it
 * (markReturned); anything else confirms what is recorded or contradicts it (a person reconciles it).
 */
async function afterTransit(
  ctx: CashoutContext,
  cashout: CashoutDoc,
  status: "paid" | "failed" | "declined" | "expired" | "returned",
  reason: string | undefined,
  alongside: (tx: CashoutTx) => Promise<void>,
): Promise<"applied" | "confirmed" | "attention"> {
  if (status === "returned") {
    if (cashout.status !== "paid") return "attention";
    await markReturned(ctx, cashout, reason, alongside);
    return "applied";
  }
  const paid = status === "paid";
  // It was paid, then returned: a late confirmation of the payment confirms what is recorded.
  if (paid && cashout.status === "failed" && cashout.returned_at) return "confirmed";
  return (cashout.status === "paid") === paid ? "confirmed" : "attention";
}

/**
 * Claims a pending cashout for sending (pending → in_transit, conditionally: of a cancel and a send, or
 * of two instances' jobs, exactly one wins) and hands it to the rail. Returns null when it was no longer
 * pending. A crash between the claim and the rail leaves it in_transit without a reference; settle()
 * sends it again, which the rail's idempotency makes safe.
 */
async function sendAndRecord(ctx: CashoutContext, cashout: CashoutDoc): Promise<CashoutDoc | null> {
  const { store, clock, later, payoutRequest } = ctx;
  const claimed = await tryTransition(store, "cashouts", CASHOUT_MACHINE, cashout, "in_transit", {
    set: { next_step_at: later(cashout.livemode, ctx.transitSeconds) },
    at: iso(clock.now(cashout.livemode)),
    refuse: (current) => refusal(current, "process"),
  });
  if (!claimed) return null;
  const sent = await sendOrFail(ctx, claimed, payoutRequest(claimed), null);
  if ("failed" in sent) return sent.failed;
  return (
    (await store.update("cashouts", claimed.id, { set: { payout_ref: sent.reference } }, { payout_ref: null })) ??
    claimed
  );
}

/**
 * Hands an in_transit cashout to the rail. A payout the rail refused (PayoutRefused: nothing was paid,
 * and the same request would be refused again) ends here: in_transit → failed, `could_not_process`, its
 * amount back in `available` and `cashout.failed`, in one transaction (failIn), so exactly once: the
 * transition is conditional on in_transit, and a crash before it leaves the cashout in transit without
 * a reference, which settle() sends again under the same keys, to the same refusal. Anything else the
 * rail throws (in doubt: a time-out, a 5xx) is thrown on, and the cashout is sent again next pass.
 */
async function sendOrFail(
  ctx: CashoutContext,
  cashout: CashoutDoc,
  request: PayoutRequest,
  caller: Caller | null,
): Promise<{ reference: string } | { failed: CashoutDoc }> {
  const { store, rail, failIn } = ctx;
  try {
    return { reference: (await rail.send(request)).reference };
  } catch (err) {
    if (!(err instanceof PayoutRefused)) throw err;
    try {
      return { failed: await failIn(caller, cashout, "could_not_process", err.failureMessage) };
    } catch (failure) {
      // Failed by another instance meanwhile (its funds came back there): what is stored stands.
      const current = await store.get("cashouts", cashout.id);
      if (failure instanceof DomainError && failure.code === "invalid_state_transition" && current) {
        return { failed: current };
      }
      throw failure;
    }
  }
}

export function payouts(ctx: CashoutContext) {
  const { store, clock, rail, later, payoutRequest, transition, failIn } = ctx;
  const send = (cashout: CashoutDoc) => sendAndRecord(ctx, cashout);

  /** in_transit → paid: the money left the platform (`cashout.paid`), in one transaction. */
  function markPaid(cashout: CashoutDoc, caller: Caller | null, alongside?: (tx: CashoutTx) => Promise<void>) {
    return commit(store, caller, async (tx) => {
      await alongside?.(tx);
      const paid = await transition(tx, cashout, "paid", { next_step_at: null }, "process");
      await postCashoutPaid(tx, clock, {
        livemode: paid.livemode,
        merchantId: paid.merchant_id,
        currency: paid.currency,
        cashoutId: paid.id,
        amount: paid.amount,
      });
      await recordEvent(tx, clock, paid.livemode, "cashout.paid", eventFields(paid));
      return paid;
    });
  }

  /** Asks the rail what became of an in_transit cashout and records it: paid, failed (funds back), or later. */
  async function settle(cashout: CashoutDoc, caller: Caller | null): Promise<CashoutDoc> {
    const request = payoutRequest(cashout);
    let reference = cashout.payout_ref;
    if (reference === null) {
      const sent = await sendOrFail(ctx, cashout, request, caller);
      if ("failed" in sent) return sent.failed;
      reference = sent.reference;
      await store.update("cashouts", cashout.id, { set: { payout_ref: reference } }, { payout_ref: null });
    }
    const outcome = await rail.outcome({ ...request, reference });
    if (outcome.status === "failed") return failIn(caller, cashout, outcome.failureCode, outcome.failureMessage);
    if (outcome.status === "paid") return markPaid(cashout, caller);
    // Still on its way: ask again after another transit period.
    return commit(store, caller, async (tx) => {
      const pushed = await tx.update(
        "cashouts",
        cashout.id,
        { set: { next_step_at: later(cashout.livemode, ctx.transitSeconds) } },
        { status: "in_transit" },
      );
      return pushed ?? cashout;
    });
  }

  return {
    /**
     * A payout's outcome as the acquirer reports it (Adyen's PAYOUT_THIRDPARTY, PAYOUT_DECLINE,
     * PAYOUT_EXPIRE, PAIDOUT_REVERSED: domain/acquirer-notifications), applied once: `alongside` marks the
     * notification applied first inside the change's transaction. An in_transit cashout is paid, or fails
     * with its amount back in `available`; a pending one has not been sent yet (out of order: waits);
     * one no longer in transit: afterTransit (a paid one returned by the bank fails).
     */
    async acquirerOutcome(
      livemode: boolean,
      id: string,
      status: "paid" | "failed" | "declined" | "expired" | "returned",
      reason: string | undefined,
      alongside: (tx: CashoutTx) => Promise<void>,
    ): Promise<"applied" | "waiting" | "confirmed" | "attention"> {
      const cashout = await store.get("cashouts", id);
      if (!cashout || cashout.livemode !== livemode || cashout.status === "pending") return "waiting";
      const paid = status === "paid";
      if (cashout.status === "in_transit") {
        if (status === "returned") return "waiting";
        if (paid) await markPaid(cashout, null, alongside);
        else {
          const code = payoutFailureCode(status, reason);
          const message = `${FAILURE_MESSAGES[code]}${reason ? ` (${reason})` : ""}`;
          await failIn(null, cashout, code, message, alongside);
        }
        return "applied";
      }
      return afterTransit(ctx, cashout, status, reason, alongside);
    },

    /** Sandbox: the destination's bank processes the cashout now (paid, or failed for a magic destination). */
    async sandboxPay(caller: Caller, id: string): Promise<CashoutDoc> {
      sandboxOnly(caller.livemode, "cashout", id);
      let cashout = await ctx.load(caller.livemode, id);
      if (cashout.status === "pending") {
        const sent = await send(cashout);
        if (!sent) throw refusal((await store.get("cashouts", id)) ?? cashout, "process");
        // Refused by the rail: already failed, its funds back (sendOrFail).
        if (sent.status === "failed") return sent;
        cashout = sent;
      }
      if (cashout.status !== "in_transit") throw refusal(cashout, "process");
      return settle(cashout, caller);
    },

    /** Sandbox: the destination's bank refuses the cashout now; its amount returns to `available`. */
    async sandboxFail(caller: Caller, id: string, code: CashoutFailureCode = "could_not_process"): Promise<CashoutDoc> {
      sandboxOnly(caller.livemode, "cashout", id);
      const cashout = await ctx.load(caller.livemode, id);
      if (cashout.status !== "pending" && cashout.status !== "in_transit") throw refusal(cashout, "process");
      return failIn(caller, cashout, code, FAILURE_MESSAGES[code]);
    },

    /**
     * The payout job, one pass for one environment: sends the pending cashouts whose time has come on
     * that environment's clock, then records the outcome of the in_transit ones due for it. Safe on
     * several instances at once (every step is conditional). Returns how many it sent, and how many
     * it finished (paid or failed).
     */
    async advance(livemode: boolean, limit = 500): Promise<{ sent: number; finished: number }> {
      const due = { $lte: iso(clock.now(livemode)) };
      let sent = 0;
      let finished = 0;
      // One cashout's failure (the rail unreachable) must not hold up the others: the pass goes on, and
      // reports the first failure at its end (the job logs it; the cashout is retried next pass).
      let failure: unknown;
      for (const cashout of await store.findAll(
        "cashouts",
        { livemode, status: "pending", next_step_at: due },
        limit,
      )) {
        try {
          const after = await send(cashout);
          if (after?.status === "failed") finished++;
          else if (after) sent++;
        } catch (err) {
          failure ??= err;
        }
      }
      for (const cashout of await store.findAll(
        "cashouts",
        { livemode, status: "in_transit", next_step_at: due },
        limit,
      )) {
        try {
          const after = await settle(cashout, null);
          if (after.status !== "in_transit") finished++;
        } catch (err) {
          // Settled by another instance (or the sandbox helpers) meanwhile: nothing to do.
          if (!(err instanceof DomainError && err.code === "invalid_state_transition")) failure ??= err;
        }
      }
      if (failure !== undefined) throw failure;
      return { sent, finished };
    },

    /** When the environment's next cashout is due to be sent or asked about after `after`, or null. */
    async nextStep(livemode: boolean, after: Date): Promise<string | null> {
      const later = { $gt: iso(after) };
      const soonest = await Promise.all(
        (["pending", "in_transit"] as const).map((status) =>
          store.findAll("cashouts", { livemode, status, next_step_at: later }, 1, {
            by: "next_step_at",
            direction: "asc",
          }),
        ),
      );
      const times = soonest
        .flat()
        .map((c) => c.next_step_at)
        .filter((t): t is string => t !== null);
      return times.sort()[0] ?? null;
    },
  };
}
