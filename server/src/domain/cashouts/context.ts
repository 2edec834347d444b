import type { Caller } from "../kernel/caller.ts";
import type { Clock } from "../kernel/clock.ts";
import { commit } from "../kernel/commit.ts";
import { inEnvironment } from "../kernel/environment.ts";
import { recordEvent } from "../kernel/events.ts";
import type { MoneyRules } from "../kernel/money.ts";
import { transition as machineTransition } from "../kernel/state-machine.ts";
import { iso } from "../kernel/time.ts";
import type { Balances } from "../ledger/balances.ts";
import { postCashoutReversal } from "../ledger/ledger.ts";
import type { LedgerEntryDoc, PostingDoc } from "../ledger/records.ts";
import type { Merchants } from "../merchants/merchants.ts";
import { openPan, type VaultKeys } from "../vault/crypto.ts";
import type { Destination } from "./destinations.ts";
import { type PayoutRail, type PayoutRequest, payoutKey } from "./payout-rail.ts";
import type { CashoutDoc, CashoutFailureCode, CashoutStatus, CashoutStore, CashoutTx } from "./records.ts";
import { CASHOUT_MACHINE, type CashoutAction, eventFields, refusal } from "./state.ts";

// What every cashout operation works with (cashouts.ts, payouts.ts): its dependencies, and the steps
// they share.

export interface CashoutsDeps {
  store: CashoutStore;
  clock: Clock;
  merchants: Merchants;
  /** The ledger's balances: whether a merchant holds a currency at all (createCashout). */
  balances: Pick<Balances, "held">;
  money: MoneyRules;
  vaultKeys: VaultKeys;
  rail: PayoutRail;
  /** How long a cashout stays pending (and can be canceled) before the payout job sends it. */
  pendingSeconds: number;
  /** How long after sending the payout job asks the rail what became of a cashout. */
  transitSeconds: number;
}

export function cashoutContext(deps: CashoutsDeps): CashoutContext {
  const { store, clock } = deps;
  /** `seconds` from now on the environment's clock, in the stored format. */
  const later = (livemode: boolean, seconds: number) => iso(new Date(clock.now(livemode).getTime() + seconds * 1000));

  async function load(livemode: boolean, id: string): Promise<CashoutDoc> {
    return inEnvironment(await store.get("cashouts", id), livemode, "cashout", id);
  }

  function payoutRequest(cashout: CashoutDoc): PayoutRequest {
    // The sealed destination is the JSON of a checked Destination, sealed by cashouts.ts's create
    // (sealPan(JSON.stringify(destination))) and never written otherwise; JSON.parse types it any: the cast.
    const destination = JSON.parse(openPan(cashout.sealed_destination, cashout.id, deps.vaultKeys)) as Destination;
    return {
      idempotencyKey: payoutKey(cashout.id),
      cashoutId: cashout.id,
      merchantId: cashout.merchant_id,
      livemode: cashout.livemode,
      amount: cashout.amount,
      currency: cashout.currency,
      destination,
    };
  }

  /** Moves a cashout through CASHOUT_MACHINE, conditionally on the status it starts from (a concurrent change: 409). */
  function transition(
    tx: CashoutTx,
    cashout: CashoutDoc,
    to: CashoutStatus,
    set: Partial<Omit<CashoutDoc, "status">>,
    action: CashoutAction,
  ): Promise<CashoutDoc> {
    return machineTransition(tx, "cashouts", "cashout", CASHOUT_MACHINE, cashout, to, {
      set,
      at: iso(clock.now(cashout.livemode)),
      refuse: (current) => refusal(current, action),
    });
  }

  /** The cashout's amount back to `available`, inside the transaction that ends it. */
  function returnFunds(tx: CashoutTx, cashout: CashoutDoc) {
    return postCashoutReversal(tx, clock, {
      livemode: cashout.livemode,
      merchantId: cashout.merchant_id,
      currency: cashout.currency,
      cashoutId: cashout.id,
      amount: cashout.amount,
    });
  }

  /** pending|in_transit → failed, funds returned, `cashout.failed`, in one transaction. */
  function failIn(
    caller: Caller | null,
    cashout: CashoutDoc,
    code: CashoutFailureCode,
    message: string,
    alongside?: (tx: CashoutTx) => Promise<void>,
  ) {
    return commit(store, caller, async (tx) => {
      await alongside?.(tx);
      const failed = await transition(
        tx,
        cashout,
        "failed",
        { failure_code: code, failure_message: message, next_step_at: null },
        "process",
      );
      await returnFunds(tx, failed);
      await recordEvent(tx, clock, failed.livemode, "cashout.failed", {
        ...eventFields(failed),
        failure_code: code,
        failure_message: message,
      });
      return failed;
    });
  }

  return { ...deps, later, load, payoutRequest, transition, returnFunds, failIn };
}

/** What every cashout use case works with: the area's dependencies and the steps they share (this file). */
export interface CashoutContext extends CashoutsDeps {
  /** `seconds` from now on the environment's clock, in the stored format. */
  later(livemode: boolean, seconds: number): string;
  load(livemode: boolean, id: string): Promise<CashoutDoc>;
  payoutRequest(cashout: CashoutDoc): PayoutRequest;
  transition(
    tx: CashoutTx,
    cashout: CashoutDoc,
    to: CashoutStatus,
    set: Partial<Omit<CashoutDoc, "status">>,
    action: CashoutAction,
  ): Promise<CashoutDoc>;
  returnFunds(tx: CashoutTx, cashout: CashoutDoc): Promise<{ posting: PostingDoc; entries: LedgerEntryDoc[] }>;
  failIn(
    caller: Caller | null,
    cashout: CashoutDoc,
    code: CashoutFailureCode,
    message: string,
    alongside?: (tx: CashoutTx) => Promise<void>,
  ): Promise<CashoutDoc>;
}
