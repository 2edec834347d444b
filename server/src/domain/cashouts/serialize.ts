import type { Schemas } from "../kernel/operations.ts";
import type { CashoutDoc } from "./records.ts";

/** A stored cashout → the contract's Cashout: its destination as stored, already masked. */
export const cashout = (c: CashoutDoc): Schemas["Cashout"] => ({
  id: c.id,
  object: "cashout",
  merchant_id: c.merchant_id,
  amount: c.amount,
  currency: c.currency,
  status: c.status,
  // The stored view is already masked; the sealed full destination is never serialized.
  destination: { ...c.destination },
  failure_code: c.failure_code,
  failure_message: c.failure_message,
  description: c.description,
  metadata: c.metadata,
  livemode: c.livemode,
  created_at: c.created_at,
  updated_at: c.updated_at,
});
