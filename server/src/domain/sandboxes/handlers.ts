import { type HandlerKit, type Handlers, list, page } from "../kernel/operations.ts";
import type { Sandboxes } from "./sandboxes.ts";
import * as serialize from "./serialize.ts";

// Sandboxes on demand (spec/resources/sandboxes.tsp; scope `*`).

export function sandboxHandlers({ sandboxes }: { sandboxes: Sandboxes }, { answer }: HandlerKit) {
  return {
    createSandbox: answer(201, serialize.sandboxWithKey, ({ caller, body }) => sandboxes.create(caller, body)),
    listSandboxes: async ({ caller, query }) => ({
      status: 200,
      body: list(await sandboxes.list(caller, page(query)), serialize.sandbox),
    }),
    getSandbox: async ({ caller, path }) => ({
      status: 200,
      body: serialize.sandbox(await sandboxes.get(caller, path.id)),
    }),
    deleteSandbox: async ({ caller, path }) => ({
      status: 200,
      body: serialize.deletedSandbox(await sandboxes.remove(caller, path.id)),
    }),
  } satisfies Partial<Handlers>;
}
