import { type Handlers, list, page } from "../kernel/operations.ts";
import type { BalanceTransactions } from "./balance-transactions.ts";
import type { Balances } from "./balances.ts";
import * as serialize from "./serialize.ts";

// Balances (getMerchantBalance in spec/resources/balances.tsp) and balance transactions
// (getBalanceTransaction, listBalanceTransactions in spec/resources/balance-transactions.tsp); scope
// `merchants`, the scope that reads a merchant's balance.

export function ledgerHandlers({
  balances,
  balanceTransactions,
}: {
  balances: Balances;
  balanceTransactions: BalanceTransactions;
}) {
  return {
    getMerchantBalance: async ({ caller, path }) => {
      const { merchant, rows } = await balances.get(caller, path.id);
      return { status: 200, body: serialize.balance(merchant.id, merchant.livemode, rows) };
    },
    getBalanceTransaction: async ({ caller, path }) => ({
      status: 200,
      body: serialize.balanceTransaction(await balanceTransactions.get(caller, path.id)),
    }),
    listBalanceTransactions: async ({ caller, query }) => ({
      status: 200,
      body: list(
        await balanceTransactions.list(
          caller,
          {
            merchant_id: query.merchant_id,
            type: query.type,
            created_gte: query.created_gte,
            created_lt: query.created_lt,
            source: query.source,
            cashout_id: query.cashout_id,
          },
          page(query),
        ),
        serialize.balanceTransaction,
      ),
    }),
  } satisfies Partial<Handlers>;
}
