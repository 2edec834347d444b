import type { AreaContext, AreaDeclaration } from "../kernel/area.ts";
import { healthHandlers } from "./handlers.ts";
import { createHealth, type Health } from "./health.ts";

// Health and readiness (spec/resources/health.tsp): no records of its own (domain/areas.ts).

export const healthArea = {
  name: "health",
  collections: {},
  idPrefixes: [],
  machines: [],
  make: ({ store }: AreaContext<Record<never, never>>): { health: Health } => ({ health: createHealth(store) }),
  handlers: healthHandlers,
} as const satisfies AreaDeclaration;
