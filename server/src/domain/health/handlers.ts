import type { Domain } from "../index.ts";
import type { Handlers } from "../kernel/operations.ts";

// Health (getLiveness, getReadiness in spec/resources/health.tsp): public, no key, no caller; never in
// the request log (http/app.ts).

export function healthHandlers({ health }: Domain) {
  return {
    getLiveness: async () => ({ status: 200, body: { status: "ok" } }),
    getReadiness: async () => {
      await health.ready();
      return { status: 200, body: { status: "ready", checks: { store: "ok" } } };
    },
  } satisfies Partial<Handlers>;
}
