import type { Schemas } from "../kernel/operations.ts";
import type { MerchantDoc } from "./records.ts";

// Stored merchant → the contract's Merchant: exactly the fields the contract shows.

export const merchant = (m: MerchantDoc): Schemas["Merchant"] => ({
  id: m.id,
  object: "merchant",
  name: m.name,
  status: m.status,
  metadata: m.metadata,
  livemode: m.livemode,
  created_at: m.created_at,
  updated_at: m.updated_at,
});
