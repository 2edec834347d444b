import { type HandlerKit, type Handlers, list, page } from "../kernel/operations.ts";
import type { Cashouts } from "./cashouts.ts";
import * as serialize from "./serialize.ts";

// Cashouts (spec/resources/cashouts.tsp; scope `cashouts`), with the sandbox helpers.

export function cashoutHandlers({ cashouts }: { cashouts: Cashouts }, { answer }: HandlerKit) {
  return {
    createCashout: answer(201, serialize.cashout, ({ caller, body }) => cashouts.create(caller, body)),
    getCashout: async ({ caller, path }) => ({
      status: 200,
      body: serialize.cashout(await cashouts.get(caller, path.id)),
    }),
    listCashouts: async ({ caller, query }) => ({
      status: 200,
      body: list(
        await cashouts.list(caller, { merchant_id: query.merchant_id, status: query.status }, page(query)),
        serialize.cashout,
      ),
    }),
    cancelCashout: answer(200, serialize.cashout, ({ caller, path }) => cashouts.cancel(caller, path.id)),
    sandboxPayCashout: answer(200, serialize.cashout, ({ caller, path }) => cashouts.sandboxPay(caller, path.id)),
    sandboxFailCashout: answer(200, serialize.cashout, ({ caller, path, body }) =>
      cashouts.sandboxFail(caller, path.id, body.failure_code),
    ),
  } satisfies Partial<Handlers>;
}
