import type { AreaContext, AreaDeclaration } from "../kernel/area.ts";
import { serviceKeyHandlers } from "./handlers.ts";
import { serviceKeyCollections } from "./records.ts";
import { createServiceKeys, type ServiceKeys } from "./service-keys.ts";

// Service keys (spec/resources/service-keys.tsp), as the list of areas sees them (domain/areas.ts).

export const serviceKeysArea = {
  name: "service-keys",
  collections: serviceKeyCollections,
  idPrefixes: ["kid"],
  machines: [],
  make: ({
    store,
    clock,
    deps,
  }: AreaContext<typeof serviceKeyCollections, unknown, { sandbox?: { keyTag: string } | undefined }>): {
    serviceKeys: ServiceKeys;
  } => ({
    // A sandbox on demand's keys end with its tag (domain/sandboxes): how a request is routed to it.
    serviceKeys: createServiceKeys(store, clock, deps.sandbox?.keyTag),
  }),
  handlers: serviceKeyHandlers,
} as const satisfies AreaDeclaration;
