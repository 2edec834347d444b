import type { Page, PageResult } from "../../store/port.ts";
import type { AppStore, AppTx } from "../collections.ts";
import type { Caller, Now } from "../kernel/caller.ts";
import { commit } from "../kernel/commit.ts";
import { inEnvironment, sandboxOnly } from "../kernel/environment.ts";
import { DomainError, notFound } from "../kernel/errors.ts";
import { recordEvent } from "../kernel/events.ts";
import { newId } from "../kernel/ids.ts";
import { assertMoney, type MoneyRules } from "../kernel/money.ts";
import { createdAt, iso } from "../kernel/time.ts";
import { balanceId, post } from "../ledger/ledger.ts";
import type { Merchants } from "../merchants/merchants.ts";
import { openPan, sealPan, type VaultKeys } from "../vault/crypto.ts";
import { type Destination, type DestinationInput, validateDestination, viewOf } from "./destinations.ts";
import { FAILURE_MESSAGES, type PayoutRail, type PayoutRequest } from "./payout-rail.ts";
import type { CashoutDoc, CashoutFailureCode, CashoutStatus } from "./records.ts";

// Cashouts (spec/resources/cashouts.tsp, operations createCashout … sandboxFailCashout): a merchant takes money out of its available balance.
//
// Money rules, each in one transaction with the cashout's state change, its event and (for a POST) the
// Idempotency-Key's outcome (domain/commit.ts):
// - create: the amount leaves `available` through a conditional ledger debit (ledger.ts post), so a
//   cashout the balance does not cover is refused, however many arrive at once;
// - cancel (only while pending) and failure: the amount returns to `available` (a `cashout_reversal`
//   entry), once, because the state change it rides on is conditional on the state it starts from;
// - paid: no money moves (it left at creation).
// The payout rail (payouts.ts) is an outside call and is never made inside a store transaction: a cashout
// is first claimed (pending → in_transit, conditionally, so a concurrent cancel and a send cannot both
// win), then sent.

/** The cashout state machine: every allowed transition. Anything else is a 409 invalid_state_transition. */
export const CASHOUT_TRANSITIONS: Record<CashoutStatus, readonly CashoutStatus[]> = {
  pending: ["in_transit", "canceled", "failed"],
  in_transit: ["paid", "failed"],
  paid: [],
  failed: [],
  canceled: [],
};

export interface CashoutCreate {
  merchant_id: string;
  amount: number;
  currency: string;
  destination: DestinationInput;
  description?: string | undefined;
  metadata?: Record<string, string> | undefined;
}

export interface CashoutsDeps {
  store: AppStore;
  now: Now;
  merchants: Merchants;
  money: MoneyRules;
  vaultKeys: VaultKeys;
  rail: PayoutRail;
  /** How long a cashout stays pending (and can be canceled) before the payout job sends it. */
  pendingSeconds: number;
  /** How long after sending the payout job asks the rail what became of a cashout. */
  transitSeconds: number;
}

function refusal(cashout: CashoutDoc, action: "cancel" | "process"): DomainError {
  return new DomainError(
    "invalid_state_transition",
    action === "cancel"
      ? `The cashout is ${cashout.status}: only pending cashouts can be canceled.`
      : `The cashout is ${cashout.status}: only pending or in_transit cashouts can be paid or failed.`,
  );
}

function eventFields(c: CashoutDoc) {
  return {
    cashout_id: c.id,
    merchant_id: c.merchant_id,
    amount: c.amount,
    currency: c.currency,
    status: c.status,
    destination_type: c.destination.type,
  };
}

export function createCashouts(deps: CashoutsDeps) {
  const { store, now, rail } = deps;
  const later = (seconds: number) => iso(new Date(now().getTime() + seconds * 1000));

  async function load(livemode: boolean, id: string): Promise<CashoutDoc> {
    return inEnvironment(await store.get("cashouts", id), livemode, "cashout", id);
  }

  function payoutRequest(cashout: CashoutDoc): PayoutRequest {
    const destination = JSON.parse(openPan(cashout.sealed_destination, cashout.id, deps.vaultKeys)) as Destination;
    return {
      cashoutId: cashout.id,
      livemode: cashout.livemode,
      amount: cashout.amount,
      currency: cashout.currency,
      destination,
    };
  }

  /** Applies a transition conditionally on the status it starts from; a concurrent change makes it a 409. */
  async function transition(
    tx: AppTx,
    cashout: CashoutDoc,
    to: CashoutStatus,
    set: Partial<CashoutDoc>,
    action: "cancel" | "process",
  ): Promise<CashoutDoc> {
    if (!CASHOUT_TRANSITIONS[cashout.status].includes(to)) throw refusal(cashout, action);
    const updated = await tx.update(
      "cashouts",
      cashout.id,
      { set: { ...set, status: to, updated_at: iso(now()) } },
      { status: cashout.status },
    );
    if (!updated) {
      const current = await tx.get("cashouts", cashout.id);
      throw current ? refusal(current, action) : notFound("cashout", cashout.id);
    }
    return updated;
  }

  /** The cashout's amount back to `available`, inside the transaction that ends it. */
  function returnFunds(tx: AppTx, cashout: CashoutDoc) {
    return post(tx, now, {
      livemode: cashout.livemode,
      merchantId: cashout.merchant_id,
      currency: cashout.currency,
      bucket: "available",
      amount: cashout.amount,
      type: "cashout_reversal",
      sourceId: cashout.id,
    });
  }

  /** pending|in_transit → failed, funds returned, `cashout.failed`, in one transaction. */
  function failIn(caller: Caller | null, cashout: CashoutDoc, code: CashoutFailureCode, message: string) {
    return commit(store, caller, async (tx) => {
      const failed = await transition(
        tx,
        cashout,
        "failed",
        { failure_code: code, failure_message: message, next_step_at: null },
        "process",
      );
      await returnFunds(tx, failed);
      await recordEvent(tx, now, failed.livemode, "cashout.failed", {
        ...eventFields(failed),
        failure_code: code,
        failure_message: message,
      });
      return failed;
    });
  }

  /**
   * Claims a pending cashout for sending (pending → in_transit, conditionally: of a cancel and a send, or
   * of two instances' jobs, exactly one wins) and hands it to the rail. Returns null when it was no longer
   * pending. A crash between the claim and the rail leaves it in_transit without a reference; settle()
   * sends it again, which the rail's idempotency makes safe.
   */
  async function send(cashout: CashoutDoc): Promise<CashoutDoc | null> {
    const claimed = await store.update(
      "cashouts",
      cashout.id,
      { set: { status: "in_transit", next_step_at: later(deps.transitSeconds), updated_at: iso(now()) } },
      { status: "pending" },
    );
    if (!claimed) return null;
    const { reference } = await rail.send(payoutRequest(claimed));
    return (
      (await store.update("cashouts", claimed.id, { set: { payout_ref: reference } }, { payout_ref: null })) ?? claimed
    );
  }

  /** Asks the rail what became of an in_transit cashout and records it: paid, failed (funds back), or later. */
  async function settle(cashout: CashoutDoc, caller: Caller | null): Promise<CashoutDoc> {
    const request = payoutRequest(cashout);
    let reference = cashout.payout_ref;
    if (reference === null) {
      reference = (await rail.send(request)).reference;
      await store.update("cashouts", cashout.id, { set: { payout_ref: reference } }, { payout_ref: null });
    }
    const outcome = await rail.outcome({ ...request, reference });
    if (outcome.status === "failed") return failIn(caller, cashout, outcome.failureCode, outcome.failureMessage);
    if (outcome.status === "paid") {
      return commit(store, caller, async (tx) => {
        const paid = await transition(tx, cashout, "paid", { next_step_at: null }, "process");
        await recordEvent(tx, now, paid.livemode, "cashout.paid", eventFields(paid));
        return paid;
      });
    }
    // Still on its way: ask again after another transit period.
    return commit(store, caller, async (tx) => {
      const pushed = await tx.update(
        "cashouts",
        cashout.id,
        { set: { next_step_at: later(deps.transitSeconds) } },
        { status: "in_transit" },
      );
      return pushed ?? cashout;
    });
  }

  return {
    load,

    async create(caller: Caller, input: CashoutCreate): Promise<CashoutDoc> {
      assertMoney(input.amount, input.currency, deps.money);
      const destination = validateDestination(input.destination, input.currency);
      const merchant = await deps.merchants.loadActive(caller.livemode, input.merchant_id, "merchant_id", "cash out");
      // A merchant that never held this currency has nothing to cash out (and gets no empty balance row).
      if (!(await store.get("balances", balanceId(merchant.id, input.currency)))) {
        throw new DomainError(
          "insufficient_balance",
          `The merchant's available ${input.currency} balance does not cover ${input.amount}.`,
          { param: "amount" },
        );
      }
      const at = now();
      const id = newId("co");
      const cashout: CashoutDoc = {
        id,
        livemode: caller.livemode,
        created_at: createdAt(at),
        updated_at: iso(at),
        merchant_id: merchant.id,
        amount: input.amount,
        currency: input.currency,
        status: "pending",
        destination: viewOf(destination),
        sealed_destination: sealPan(JSON.stringify(destination), id, deps.vaultKeys),
        failure_code: null,
        failure_message: null,
        description: input.description ?? null,
        metadata: input.metadata ?? {},
        payout_ref: null,
        next_step_at: later(deps.pendingSeconds),
      };
      return commit(store, caller, async (tx) => {
        // The conditional debit: refused (422, the whole transaction rolled back) unless `available` covers it.
        await post(tx, now, {
          livemode: cashout.livemode,
          merchantId: cashout.merchant_id,
          currency: cashout.currency,
          bucket: "available",
          amount: -cashout.amount,
          type: "cashout",
          sourceId: cashout.id,
        });
        await tx.insert("cashouts", cashout);
        await recordEvent(tx, now, cashout.livemode, "cashout.created", eventFields(cashout));
        return cashout;
      });
    },

    get: (caller: Caller, id: string) => load(caller.livemode, id),

    list: (
      caller: Caller,
      filter: { merchant_id?: string | undefined; status?: CashoutStatus | undefined },
      page: Page,
    ): Promise<PageResult<CashoutDoc>> =>
      store.list(
        "cashouts",
        {
          livemode: caller.livemode,
          ...(filter.merchant_id ? { merchant_id: filter.merchant_id } : {}),
          ...(filter.status ? { status: filter.status } : {}),
        },
        page,
      ),

    /** Cancels a pending cashout; its amount returns to `available`. */
    async cancel(caller: Caller, id: string): Promise<CashoutDoc> {
      const cashout = await load(caller.livemode, id);
      if (cashout.status !== "pending") throw refusal(cashout, "cancel");
      return commit(store, caller, async (tx) => {
        const canceled = await transition(tx, cashout, "canceled", { next_step_at: null }, "cancel");
        await returnFunds(tx, canceled);
        await recordEvent(tx, now, canceled.livemode, "cashout.canceled", eventFields(canceled));
        return canceled;
      });
    },

    /** Sandbox: the destination's bank processes the cashout now (paid, or failed for a magic destination). */
    async sandboxPay(caller: Caller, id: string): Promise<CashoutDoc> {
      sandboxOnly(caller.livemode, "cashout", id);
      let cashout = await load(caller.livemode, id);
      if (cashout.status === "pending") {
        const sent = await send(cashout);
        if (!sent) throw refusal((await store.get("cashouts", id)) ?? cashout, "process");
        cashout = sent;
      }
      if (cashout.status !== "in_transit") throw refusal(cashout, "process");
      return settle(cashout, caller);
    },

    /** Sandbox: the destination's bank refuses the cashout now; its amount returns to `available`. */
    async sandboxFail(caller: Caller, id: string, code: CashoutFailureCode = "could_not_process"): Promise<CashoutDoc> {
      sandboxOnly(caller.livemode, "cashout", id);
      const cashout = await load(caller.livemode, id);
      if (cashout.status !== "pending" && cashout.status !== "in_transit") throw refusal(cashout, "process");
      return failIn(caller, cashout, code, FAILURE_MESSAGES[code]);
    },

    /**
     * The payout job, one pass: sends the pending cashouts whose time has come, then records the outcome
     * of the in_transit ones due for it. Safe on several instances at once (every step is conditional).
     * Returns how many cashouts it moved.
     */
    async advance(limit = 500): Promise<number> {
      const due = { $lte: iso(now()) };
      let moved = 0;
      // One cashout's failure (the rail unreachable) must not hold up the others: the pass goes on, and
      // reports the first failure at its end (the job logs it; the cashout is retried next pass).
      let failure: unknown;
      for (const cashout of await store.findAll("cashouts", { status: "pending", next_step_at: due }, limit)) {
        try {
          if (await send(cashout)) moved++;
        } catch (err) {
          failure ??= err;
        }
      }
      for (const cashout of await store.findAll("cashouts", { status: "in_transit", next_step_at: due }, limit)) {
        try {
          const after = await settle(cashout, null);
          if (after.status !== "in_transit") moved++;
        } catch (err) {
          // Settled by another instance (or the sandbox helpers) meanwhile: nothing to do.
          if (!(err instanceof DomainError && err.code === "invalid_state_transition")) failure ??= err;
        }
      }
      if (failure !== undefined) throw failure;
      return moved;
    },
  };
}

export type Cashouts = ReturnType<typeof createCashouts>;
