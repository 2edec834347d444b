import type { AreaContext, AreaDeclaration } from "./area.ts";
import { idempotencyCollections } from "./commit.ts";
import { eventCollections } from "./events.ts";
import { iso } from "./time.ts";

// The kernel's own records, in the list like an area's (domain/areas.ts): events, which every area
// records in the transaction of the change they report (kernel/events.ts), and the idempotency records
// the HTTP layer commits with each change (kernel/commit.ts).

const collections = { ...eventCollections, ...idempotencyCollections };

export const kernelArea = {
  name: "kernel",
  collections,
  idPrefixes: ["evt"],
  machines: [],
  make: () => ({}),
  jobs: ({ store, now }: AreaContext<typeof collections>) => ({
    /** Forgets Idempotency-Keys older than their time to live. */
    sweepIdempotency: () => store.deleteMany("idempotency", { expires_at: { $lt: iso(now()) } }),
  }),
} as const satisfies AreaDeclaration;
