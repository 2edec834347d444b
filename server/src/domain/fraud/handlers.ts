import { type HandlerKit, type Handlers, list, page } from "../kernel/operations.ts";
import type { Fraud } from "./index.ts";
import * as serialize from "./serialize.ts";

// Fraud evaluation, value lists and settings (spec/resources/fraud; scope `fraud`).

export function fraudHandlers({ fraud }: { fraud: Fraud }, { answer }: HandlerKit) {
  return {
    createFraudEvaluation: answer(201, serialize.fraudEvaluation, ({ caller, body }) =>
      fraud.evaluations.create(caller, body),
    ),
    getFraudEvaluation: async ({ caller, path }) => ({
      status: 200,
      body: serialize.fraudEvaluation(await fraud.evaluations.get(caller, path.id)),
    }),
    listFraudEvaluations: async ({ caller, query }) => ({
      status: 200,
      body: list(
        await fraud.evaluations.list(caller, { tx_id: query.tx_id, decision: query.decision }, page(query)),
        serialize.fraudEvaluation,
      ),
    }),
    createFraudList: answer(201, serialize.fraudList, ({ caller, body }) => fraud.lists.create(caller, body)),
    listFraudLists: async ({ caller, query }) => ({
      status: 200,
      body: list(await fraud.lists.list(caller, { kind: query.kind }, page(query)), serialize.fraudList),
    }),
    getFraudList: async ({ caller, path }) => ({
      status: 200,
      body: serialize.fraudList(await fraud.lists.get(caller, path.id)),
    }),
    deleteFraudList: async ({ caller, path }) => ({
      status: 200,
      body: serialize.deletedFraudList(await fraud.lists.delete(caller, path.id)),
    }),
    createFraudListItem: answer(201, serialize.fraudListItem, ({ caller, path, body }) =>
      fraud.lists.addItem(caller, path.id, body.value),
    ),
    listFraudListItems: async ({ caller, path, query }) => ({
      status: 200,
      body: list(await fraud.lists.listItems(caller, path.id, page(query)), serialize.fraudListItem),
    }),
    deleteFraudListItem: async ({ caller, path }) => ({
      status: 200,
      body: serialize.deletedFraudListItem(await fraud.lists.deleteItem(caller, path.id)),
    }),
    getFraudSettings: async ({ caller }) => ({
      status: 200,
      body: serialize.fraudSettings(await fraud.settings.get(caller)),
    }),
    updateFraudSettings: async ({ caller, body }) => ({
      status: 200,
      body: serialize.fraudSettings(await fraud.settings.update(caller, body)),
    }),
  } satisfies Partial<Handlers>;
}
