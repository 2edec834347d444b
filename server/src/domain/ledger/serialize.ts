import type { Schemas } from "../kernel/operations.ts";
import type { BalanceDoc, BalanceTransactionDoc } from "./records.ts";

/** A merchant's balances → the contract's Balance, currencies in alphabetical order. */
export const balance = (merchantId: string, livemode: boolean, rows: BalanceDoc[]): Schemas["Balance"] => ({
  object: "balance",
  merchant_id: merchantId,
  livemode,
  balances: rows
    .map((b) => ({ currency: b.currency, available: b.available, pending: b.pending }))
    .sort((a, b) => a.currency.localeCompare(b.currency)),
});

/** A stored balance transaction → the contract's BalanceTransaction. */
export const balanceTransaction = (t: BalanceTransactionDoc): Schemas["BalanceTransaction"] => ({
  id: t.id,
  object: "balance_transaction",
  merchant_id: t.merchant_id,
  type: t.type,
  amount: t.amount,
  fee: t.fee,
  net: t.net,
  currency: t.currency,
  status: t.status,
  available_on: t.available_on,
  source: t.source_id,
  cashout_id: t.cashout_id,
  livemode: t.livemode,
  created_at: t.created_at,
});
