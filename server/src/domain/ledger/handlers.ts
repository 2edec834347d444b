import type { Handlers } from "../kernel/operations.ts";
import type { Balances } from "./balances.ts";
import * as serialize from "./serialize.ts";

// Balances (getMerchantBalance in spec/resources/balances.tsp; scope `merchants`).

export function ledgerHandlers({ balances }: { balances: Balances }) {
  return {
    getMerchantBalance: async ({ caller, path }) => {
      const { merchant, rows } = await balances.get(caller, path.id);
      return { status: 200, body: serialize.balance(merchant.id, merchant.livemode, rows) };
    },
  } satisfies Partial<Handlers>;
}
