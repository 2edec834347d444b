import type { Schemas } from "../kernel/operations.ts";
import type { BalanceDoc } from "./records.ts";

/**
 * A merchant's balances → the contract's Balance, currencies in alphabetical order. A chargeback may take
 * the stored `available` below zero (the overdraft rule, docs/money.md); /v1 shows `available` as never
 * negative, so the shortfall is shown as `owed` (present only then) and `available` as 0.
 */
export const balance = (merchantId: string, livemode: boolean, rows: BalanceDoc[]): Schemas["Balance"] => ({
  object: "balance",
  merchant_id: merchantId,
  livemode,
  balances: rows
    .map((b) => ({
      currency: b.currency,
      available: Math.max(0, b.available),
      pending: b.pending,
      ...(b.available < 0 ? { owed: -b.available } : {}),
    }))
    .sort((a, b) => a.currency.localeCompare(b.currency)),
});
