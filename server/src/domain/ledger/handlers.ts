import { acceptsCsv, type HandlerKit, type Handlers, list, page } from "../kernel/operations.ts";
import type { BalanceTransactions } from "./balance-transactions.ts";
import type { Balances } from "./balances.ts";
import type { FeeSchedules } from "./fee-schedules.ts";
import * as serialize from "./serialize.ts";

// Balances (getMerchantBalance in spec/resources/balances.tsp) and balance transactions
// (getBalanceTransaction, listBalanceTransactions in spec/resources/balance-transactions.tsp): scope
// `merchants`, the scope that reads a merchant's balance. A merchant's fee override
// (spec/resources/fee-schedules.tsp): scope `*`.

export function ledgerHandlers(
  {
    balances,
    balanceTransactions,
    feeSchedules,
  }: {
    balances: Balances;
    balanceTransactions: BalanceTransactions;
    feeSchedules: FeeSchedules;
  },
  { answer }: HandlerKit,
) {
  return {
    getMerchantFeeSchedule: async ({ caller, path }) => ({
      status: 200,
      body: serialize.merchantFeeSchedule(await feeSchedules.get(caller, path.id)),
    }),
    setMerchantFeeSchedule: answer(200, serialize.merchantFeeSchedule, ({ caller, path, body }) =>
      feeSchedules.set(caller, path.id, body.override),
    ),
    getMerchantBalance: async ({ caller, path }) => {
      const { merchant, rows } = await balances.get(caller, path.id);
      return { status: 200, body: serialize.balance(merchant.id, merchant.livemode, rows) };
    },
    getBalanceTransaction: async ({ caller, path }) => ({
      status: 200,
      body: serialize.balanceTransaction(await balanceTransactions.get(caller, path.id)),
    }),
    listBalanceTransactions: async ({ caller, query, header }) => {
      const filter = {
        merchant_id: query.merchant_id,
        type: query.type,
        created_gte: query.created_gte,
        created_lt: query.created_lt,
        source: query.source,
        cashout_id: query.cashout_id,
      };
      // `Accept: text/csv`: the whole filtered list, streamed (BalanceTransactionCsv).
      if (acceptsCsv(header("Accept"))) return { status: 200, body: balanceTransactions.csv(caller, filter) };
      return {
        status: 200,
        body: list(await balanceTransactions.list(caller, filter, page(query)), serialize.balanceTransaction),
      };
    },
  } satisfies Partial<Handlers>;
}
