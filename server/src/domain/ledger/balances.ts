import type { Caller } from "../kernel/caller.ts";
import type { Merchants } from "../merchants/merchants.ts";
import type { MerchantDoc } from "../merchants/records.ts";
import { balanceId } from "./postings.ts";
import type { BalanceDoc, LedgerStore } from "./records.ts";

// A merchant's balances, one per currency (getMerchantBalance, spec/resources/balances.tsp): the sums of
// its ledger entries, kept up to date by ledger.ts in the transactions that move the money.

/** More currencies than any merchant holds: one balance each. */
const MAX_CURRENCIES = 1000;

export function createBalances(store: LedgerStore, merchants: Merchants): Balances {
  return {
    /** A merchant's balance in every currency it has held (GET /v1/merchants/{id}/balance). */
    async get(caller: Caller, merchantId: string) {
      const merchant = await merchants.get(caller, merchantId);
      return { merchant, rows: await store.findAll("balances", { merchant_id: merchant.id }, MAX_CURRENCIES) };
    },
    /** Whether the merchant has ever held `currency` (a balance row exists; createCashout refuses otherwise). */
    async held(merchantId: string, currency: string): Promise<boolean> {
      return (await store.get("balances", balanceId(merchantId, currency))) !== null;
    },
  };
}

/** The ledger's balances service (getMerchantBalance). */
export interface Balances {
  /** A merchant's balance in every currency it has held (GET /v1/merchants/{id}/balance). */
  get(
    caller: Caller,
    merchantId: string,
  ): Promise<{
    merchant: MerchantDoc;
    rows: BalanceDoc[];
  }>;
  /** Whether the merchant has ever held `currency` (a balance row exists; createCashout refuses otherwise). */
  held(merchantId: string, currency: string): Promise<boolean>;
}
