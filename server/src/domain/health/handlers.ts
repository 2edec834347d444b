import type { Handlers } from "../kernel/operations.ts";
import type { Health } from "./health.ts";

// Health (getLiveness, getReadiness in spec/resources/health.tsp): public, no key, no caller; never in
// the request log (http/app.ts).

export function healthHandlers({ health }: { health: Health }) {
  return {
    getLiveness: async () => ({ status: 200, body: { status: "ok" } }),
    getReadiness: async () => {
      await health.ready();
      return { status: 200, body: { status: "ready", checks: { store: "ok" } } };
    },
  } satisfies Partial<Handlers>;
}
