import type { Clock } from "../kernel/clock.ts";
import { newId } from "../kernel/ids.ts";
import type { BalanceTransactionDoc, LedgerTx } from "./records.ts";

// Reconciliation (issue 30; docs/money.md "Reconciling a cashout"): which balance transactions a cashout
// paid out, so that a merchant's finance team can answer "what makes up this cashout?"
// (listBalanceTransactions with `cashout_id`).
//
// The rule, first in, first out: every balance transaction that moved money into or out of the merchant's
// `available` balance (outside cashouts) waits in a queue, in the order its money became available
// (`reconcile_at`, then id). A cashout takes from the front of the queue until what it took adds up to its
// amount or more. When the last one it takes goes past the amount, that one is split by an `adjustment`
// pair: one half (−the excess) goes with this cashout, the other (+the excess) takes the split
// transaction's place at the front of the queue for the next cashout. The pair moves no money (no posting:
// its halves add up to zero). So a cashout's transactions add up to its amount exactly, every time, and the
// queue always adds up to the merchant's available balance (balance-transactions.ts keeps each queued
// transaction's `net` equal to its change to `available`).
//
// It runs in the cashout's own transaction, after the ledger debited the amount from `available` (so the
// queue holds at least the amount), and its contents are final then (`cashout.reconciled`). A canceled or
// failed cashout keeps its contents: its reversal is a new transaction, queued for later cashouts.

/** How many queued transactions one read takes. */
const PAGE = 200;

export interface CashoutToReconcile {
  id: string;
  livemode: boolean;
  merchantId: string;
  currency: string;
  amount: number;
  /**
   * When the allocation happens, when not now: the upgrade of an earlier release's database allocates its
   * cashouts at the times they were made (upgrade.ts).
   */
  at?: string;
}

/**
 * Allocates the front of the merchant's queue to `cashout`, inside `tx`. Returns how many balance
 * transactions the cashout paid out (adjustments included).
 */
export async function reconcileCashout(tx: LedgerTx, clock: Clock, cashout: CashoutToReconcile): Promise<number> {
  const at = cashout.at ?? clock.createdAt(cashout.livemode);
  let sum = 0;
  let count = 0;
  for (;;) {
    const queued = await tx.findAll(
      "balance_transactions",
      { merchant_id: cashout.merchantId, currency: cashout.currency, reconcile_at: { $gte: "" } },
      PAGE,
      { by: "reconcile_at", direction: "asc" },
    );
    for (const item of queued) {
      if (item.livemode !== cashout.livemode) continue; // a merchant lives in one environment: never happens
      // Conditional: taken once, by one cashout (the transaction serializes concurrent cashouts of a
      // merchant on its balance; this is the last guard).
      const taken = await tx.update(
        "balance_transactions",
        item.id,
        { set: { cashout_id: cashout.id, reconcile_at: null } },
        { cashout_id: null, reconcile_at: item.reconcile_at },
      );
      if (!taken) throw new Error(`balance transaction ${item.id} was taken by another cashout meanwhile`);
      sum += item.net;
      count++;
      if (sum < cashout.amount) continue;
      const excess = sum - cashout.amount;
      if (excess > 0) {
        // The split: −excess stays with this cashout, +excess waits in the split transaction's place.
        await tx.insert("balance_transactions", adjustment(cashout, at, item, -excess, cashout.id, null));
        await tx.insert("balance_transactions", adjustment(cashout, at, item, excess, null, item.reconcile_at));
        count++;
      }
      return count;
    }
    if (queued.length < PAGE) break;
  }
  // The queue ran out before the amount. It never does on a ledger written by this release or upgraded
  // from an earlier one (upgrade.ts writes every past movement's balance transaction and allocates past
  // cashouts in order): the queue adds up to `available`, which covered the amount. On a store whose money
  // has no balance transactions (written by hand, or by a development build between postings and balance
  // transactions), the rest is shown as one adjustment so that the cashout's transactions still add up to
  // its amount; `ledger verify` reports the queue that no longer adds up to the balance (verify.ts).
  await tx.insert("balance_transactions", {
    ...adjustment(cashout, at, null, cashout.amount - sum, cashout.id, null),
    source_id: cashout.id,
  });
  return count + 1;
}

/** One half of an adjustment pair (or the history's adjustment): no posting, no fee, available. */
function adjustment(
  cashout: CashoutToReconcile,
  at: string,
  split: BalanceTransactionDoc | null,
  net: number,
  cashoutId: string | null,
  reconcileAt: string | null,
): BalanceTransactionDoc {
  return {
    id: newId("txn"),
    livemode: cashout.livemode,
    created_at: at,
    merchant_id: cashout.merchantId,
    type: "adjustment",
    currency: cashout.currency,
    amount: net,
    fee: 0,
    net,
    status: "available",
    available_on: at,
    source_id: split?.id ?? cashout.id,
    cashout_id: cashoutId,
    reconcile_at: reconcileAt,
  };
}
