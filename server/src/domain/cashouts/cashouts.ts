import type { components } from "@payments/contract/types";
import type { Page, PageResult } from "../../store/port.ts";
import type { Caller } from "../kernel/caller.ts";
import { commit } from "../kernel/commit.ts";
import { DomainError, invalid } from "../kernel/errors.ts";
import { recordEvent } from "../kernel/events.ts";
import { newId } from "../kernel/ids.ts";
import { assertMoney } from "../kernel/money.ts";
import type { QueryParams } from "../kernel/operations.ts";
import { iso } from "../kernel/time.ts";
import { postCashout } from "../ledger/ledger.ts";
import { reconcileCashout } from "../ledger/reconciliation.ts";
import { sealPan } from "../vault/crypto.ts";
import { type CashoutsDeps, cashoutContext } from "./context.ts";
import { validateDestination, viewOf } from "./destinations.ts";
import { payouts } from "./payouts.ts";
import type { CashoutDoc, CashoutFailureCode, CashoutTx } from "./records.ts";
import { CASHOUT_MACHINE, eventFields, refusal } from "./state.ts";

// Cashouts (spec/resources/cashouts.tsp, operations createCashout … sandboxFailCashout): a merchant takes money out of its available balance.
//
// Money rules, each in one transaction with the cashout's state change, its event and (for a POST) the
// Idempotency-Key's outcome (kernel/commit.ts):
// - create: the amount leaves `available` through a conditional ledger debit (ledger.ts postCashout), so a
//   cashout the balance does not cover is refused, however many arrive at once; the balance transactions
//   it pays out are allocated then (ledger/reconciliation.ts, `cashout.reconciled`);
// - cancel (only while pending) and failure: the amount returns to `available` (a `cashout_reversal`
//   posting), once, because the state change it rides on is conditional on the state it starts from;
// - paid: the merchant's balance does not change (the money left it at creation); the ledger moves it
//   from in transit to paid out (ledger.ts postCashoutPaid).
// The payout rail (payout-rail.ts, used by payouts.ts) is an outside call and is never made inside a
// store transaction: a cashout is first claimed (pending → in_transit, conditionally, so a concurrent
// cancel and a send cannot both win), then sent.

/** createCashout's body (the contract's CashoutCreate). */
export type CashoutCreate = components["schemas"]["CashoutCreate"];

export function createCashouts(deps: CashoutsDeps): Cashouts {
  const ctx = cashoutContext(deps);
  const { store, clock, load, later, transition, returnFunds } = ctx;
  return {
    load,

    /** A page of paid cashouts of both environments (the ledger's upgrade at open: ledger/upgrade.ts PaidCashouts). */
    listPaid: (page: Page): Promise<PageResult<CashoutDoc>> => store.list("cashouts", { status: "paid" }, page),

    async create(caller: Caller, input: CashoutCreate): Promise<CashoutDoc> {
      assertMoney(input.amount, input.currency, ctx.money);
      const today = iso(clock.now(caller.livemode)).slice(0, 10);
      const destination = validateDestination(input.destination, input.currency, today);
      const refused = deps.rail.refuses?.(caller.livemode, destination);
      if (refused) throw invalid(refused.param, `${refused.reason}. Nothing was debited.`);
      const merchant = await ctx.merchants.loadActive(caller.livemode, input.merchant_id, "merchant_id", "cash out");
      // A merchant that never held this currency has nothing to cash out (and gets no empty balance row).
      if (!(await ctx.balances.held(merchant.id, input.currency))) {
        throw new DomainError(
          "insufficient_balance",
          `The merchant's available ${input.currency} balance does not cover ${input.amount}.`,
          { param: "amount" },
        );
      }
      const created = clock.createdAt(caller.livemode);
      const id = newId("co");
      const cashout: CashoutDoc = {
        id,
        livemode: caller.livemode,
        created_at: created,
        // One timestamp for the creation: updated_at is created_at to the millisecond.
        updated_at: iso(new Date(created)),
        merchant_id: merchant.id,
        amount: input.amount,
        currency: input.currency,
        status: CASHOUT_MACHINE.start("pending"),
        destination: viewOf(destination),
        sealed_destination: sealPan(JSON.stringify(destination), id, ctx.vaultKeys),
        failure_code: null,
        failure_message: null,
        description: input.description ?? null,
        metadata: input.metadata ?? {},
        payout_ref: null,
        next_step_at: later(caller.livemode, ctx.pendingSeconds),
      };
      return commit(store, caller, async (tx) => {
        // The conditional debit: refused (422, the whole transaction rolled back) unless `available` covers it.
        await postCashout(tx, clock, {
          livemode: cashout.livemode,
          merchantId: cashout.merchant_id,
          currency: cashout.currency,
          cashoutId: cashout.id,
          amount: cashout.amount,
        });
        await tx.insert("cashouts", cashout);
        await recordEvent(tx, clock, cashout.livemode, "cashout.created", eventFields(cashout));
        // Which balance transactions it pays out, first in first out (ledger/reconciliation.ts): final now.
        const count = await reconcileCashout(tx, clock, {
          id: cashout.id,
          livemode: cashout.livemode,
          merchantId: cashout.merchant_id,
          currency: cashout.currency,
          amount: cashout.amount,
        });
        await recordEvent(tx, clock, cashout.livemode, "cashout.reconciled", {
          ...eventFields(cashout),
          balance_transaction_count: count,
        });
        return cashout;
      });
    },

    get: (caller: Caller, id: string) => load(caller.livemode, id),

    list: (
      caller: Caller,
      filter: Pick<QueryParams<"listCashouts">, "merchant_id" | "status">,
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
        await recordEvent(tx, clock, canceled.livemode, "cashout.canceled", eventFields(canceled));
        return canceled;
      });
    },

    ...payouts(ctx),
  };
}

/** The cashouts area's service (spec/resources/cashouts.tsp). */
export interface Cashouts {
  sandboxPay(caller: Caller, id: string): Promise<CashoutDoc>;
  sandboxFail(caller: Caller, id: string, code?: CashoutFailureCode): Promise<CashoutDoc>;
  advance(
    livemode: boolean,
    limit?: number,
  ): Promise<{
    sent: number;
    finished: number;
  }>;
  nextStep(livemode: boolean, after: Date): Promise<string | null>;
  load: (livemode: boolean, id: string) => Promise<CashoutDoc>;
  /** A page of paid cashouts of both environments (the ledger's upgrade at open: ledger/upgrade.ts PaidCashouts). */
  listPaid: (page: Page) => Promise<PageResult<CashoutDoc>>;
  create(caller: Caller, input: CashoutCreate): Promise<CashoutDoc>;
  get: (caller: Caller, id: string) => Promise<CashoutDoc>;
  list: (
    caller: Caller,
    filter: Pick<QueryParams<"listCashouts">, "merchant_id" | "status">,
    page: Page,
  ) => Promise<PageResult<CashoutDoc>>;
  /** Cancels a pending cashout; its amount returns to `available`. */
  cancel(caller: Caller, id: string): Promise<CashoutDoc>;
  /** A payout's outcome as the acquirer reports it (payouts.ts; domain/acquirer-notifications). */
  acquirerOutcome(
    livemode: boolean,
    id: string,
    status: "paid" | "failed" | "declined" | "expired" | "returned",
    reason: string | undefined,
    alongside: (tx: CashoutTx) => Promise<void>,
  ): Promise<"applied" | "waiting" | "confirmed" | "attention">;
}
