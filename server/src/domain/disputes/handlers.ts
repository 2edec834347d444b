import { type HandlerKit, type Handlers, list, page } from "../kernel/operations.ts";
import type { Disputes } from "./disputes.ts";
import * as serialize from "./serialize.ts";

// Disputes (spec/resources/disputes.tsp; scope `charges`), with the sandbox helpers.

export function disputeHandlers({ disputes }: { disputes: Disputes }, { answer }: HandlerKit) {
  return {
    getDispute: async ({ caller, path }) => ({
      status: 200,
      body: serialize.dispute(await disputes.get(caller, path.id)),
    }),
    listDisputes: async ({ caller, query }) => ({
      status: 200,
      body: list(
        await disputes.list(
          caller,
          { charge_id: query.charge_id, merchant_id: query.merchant_id, status: query.status },
          page(query),
        ),
        serialize.dispute,
      ),
    }),
    updateDispute: answer(200, serialize.dispute, ({ caller, path, body }) => disputes.update(caller, path.id, body)),
    closeDispute: answer(200, serialize.dispute, ({ caller, path }) => disputes.close(caller, path.id)),
    sandboxOpenDispute: answer(201, serialize.dispute, ({ caller, path, body }) =>
      disputes.sandboxOpen(caller, path.id, body),
    ),
    sandboxResolveDispute: answer(200, serialize.dispute, ({ caller, path, body }) =>
      disputes.sandboxResolve(caller, path.id, body.outcome),
    ),
  } satisfies Partial<Handlers>;
}
