import { type HandlerKit, type Handlers, list, page } from "../kernel/operations.ts";
import type { Merchants } from "./merchants.ts";
import * as serialize from "./serialize.ts";

// Merchants (spec/resources/merchants.tsp; scope `merchants`).

export function merchantHandlers({ merchants }: { merchants: Merchants }, { answer }: HandlerKit) {
  return {
    createMerchant: answer(201, serialize.merchant, ({ caller, body }) => merchants.create(caller, body)),
    getMerchant: async ({ caller, path }) => ({
      status: 200,
      body: serialize.merchant(await merchants.get(caller, path.id)),
    }),
    listMerchants: async ({ caller, query }) => ({
      status: 200,
      body: list(await merchants.list(caller, { status: query.status }, page(query)), serialize.merchant),
    }),
    updateMerchant: async ({ caller, path, body }) => ({
      status: 200,
      body: serialize.merchant(await merchants.update(caller, path.id, body)),
    }),
  } satisfies Partial<Handlers>;
}
