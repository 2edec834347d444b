import type { Processor } from "../charges/processor.ts";
import type { AreaContext, AreaDeclaration } from "../kernel/area.ts";
import { inBothEnvironments } from "../kernel/area.ts";
import type { SettingsOf } from "../kernel/settings.ts";
import type { SandboxClock } from "../sandbox-clock/sandbox-clock.ts";
import { createDisputes, type Disputes, type DisputesDeps } from "./disputes.ts";
import { disputeHandlers } from "./handlers.ts";
import { disputeCollections } from "./records.ts";
import { DISPUTE_MACHINE } from "./state.ts";

// Disputes (spec/resources/disputes.tsp), as the list of areas sees them (domain/areas.ts).

type Needs = { charges: { disputed: DisputesDeps["charges"] }; sandboxClock: Pick<SandboxClock, "refresh"> };
type Deps = {
  processors: { live: Processor | null; sandbox: Processor };
  settings: SettingsOf<"disputes">;
};
type Context = AreaContext<typeof disputeCollections, Needs, Deps>;

export const disputesArea = {
  name: "disputes",
  collections: disputeCollections,
  idPrefixes: ["dp"],
  machines: [DISPUTE_MACHINE],
  make: ({ store, clock, needs, deps }: Context): { disputes: Disputes } => ({
    disputes: createDisputes({
      store,
      clock,
      fees: deps.settings.disputes.fees,
      evidenceSeconds: deps.settings.disputes.evidenceSeconds,
      // Only the sandbox's simulator knows its dispute test cards in advance (disputes.ts: sandbox only).
      processor: deps.processors.sandbox,
      acquirers: deps.processors,
      charges: needs.charges.disputed,
    }),
  }),
  handlers: disputeHandlers,
  jobs: ({ needs }: Context, { disputes }: { disputes: Disputes }) => ({
    /** Opens the disputes the sandbox's dispute test cards scheduled, once their time has come. */
    openScheduledDisputes: () =>
      inBothEnvironments(needs.sandboxClock.refresh, (livemode) => disputes.openScheduledDue(livemode)),
    /** Closes disputes whose evidence deadline passed without a response (chargebacks lost, inquiries closed). */
    expireDisputes: () => inBothEnvironments(needs.sandboxClock.refresh, (livemode) => disputes.expireDue(livemode)),
  }),
} as const satisfies AreaDeclaration;
