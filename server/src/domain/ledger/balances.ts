import type { AppStore } from "../collections.ts";
import type { Caller } from "../kernel/caller.ts";
import type { Merchants } from "../merchants/merchants.ts";

// A merchant's balances, one per currency (getMerchantBalance, spec/resources/balances.tsp): the sums of
// its ledger entries, kept up to date by ledger.ts in the transactions that move the money.

/** More currencies than any merchant holds: one balance each. */
const MAX_CURRENCIES = 1000;

export function createBalances(store: AppStore, merchants: Merchants) {
  return {
    /** A merchant's balance in every currency it has held (GET /v1/merchants/{id}/balance). */
    async get(caller: Caller, merchantId: string) {
      const merchant = await merchants.get(caller, merchantId);
      return { merchant, rows: await store.findAll("balances", { merchant_id: merchant.id }, MAX_CURRENCIES) };
    },
  };
}

export type Balances = ReturnType<typeof createBalances>;
