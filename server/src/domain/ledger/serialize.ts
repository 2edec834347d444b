import type { Schemas } from "../kernel/operations.ts";
import type { BalanceDoc } from "./records.ts";

/** A merchant's balances → the contract's Balance, currencies in alphabetical order. */
export const balance = (merchantId: string, livemode: boolean, rows: BalanceDoc[]): Schemas["Balance"] => ({
  object: "balance",
  merchant_id: merchantId,
  livemode,
  balances: rows
    .map((b) => ({ currency: b.currency, available: b.available, pending: b.pending }))
    .sort((a, b) => a.currency.localeCompare(b.currency)),
});
