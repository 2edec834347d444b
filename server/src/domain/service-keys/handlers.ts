import { defaulted, type HandlerKit, type Handlers, list, page } from "../kernel/operations.ts";
import * as serialize from "./serialize.ts";
import type { ServiceKeys } from "./service-keys.ts";

// Service keys (spec/resources/service-keys.tsp; scope `*`).

export function serviceKeyHandlers({ serviceKeys }: { serviceKeys: ServiceKeys }, { answer }: HandlerKit) {
  return {
    createServiceKey: answer(201, serialize.serviceKeyWithSecret, ({ caller, body }) =>
      serviceKeys.create(caller, body),
    ),
    listServiceKeys: async ({ caller, query }) => ({
      status: 200,
      body: list(await serviceKeys.list(caller, page(query)), serialize.serviceKey),
    }),
    getServiceKey: async ({ caller, path }) => ({
      status: 200,
      body: serialize.serviceKey(await serviceKeys.get(caller, path.id)),
    }),
    rotateServiceKey: answer(200, serialize.serviceKeyWithSecret, ({ caller, path, body }) =>
      serviceKeys.rotate(caller, path.id, defaulted(body.grace_period_seconds, "grace_period_seconds")),
    ),
    revokeServiceKey: answer(200, serialize.serviceKey, ({ caller, path }) => serviceKeys.revoke(caller, path.id)),
  } satisfies Partial<Handlers>;
}
