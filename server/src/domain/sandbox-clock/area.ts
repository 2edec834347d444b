import type { Cashouts } from "../cashouts/cashouts.ts";
import type { Charges } from "../charges/charges.ts";
import type { Disputes } from "../disputes/disputes.ts";
import type { AreaContext, AreaDeclaration } from "../kernel/area.ts";
import type { PaymentLinks } from "../payment-links/payment-links.ts";
import type { Webhooks } from "../webhooks/index.ts";
import { sandboxClockHandlers } from "./handlers.ts";
import { sandboxClockCollections } from "./records.ts";
import { createSandboxClock, type SandboxClock } from "./sandbox-clock.ts";

// The sandbox's clock (spec/resources/sandbox-clock.tsp): moves the sandbox's time and runs what falls due.
// Made last in the list of areas (domain/areas.ts): it drives the others' work.

type Needs = {
  charges: Charges;
  cashouts: Cashouts;
  paymentLinks: PaymentLinks;
  disputes: Disputes;
  webhooks: Pick<Webhooks, "dispatcher">;
};

export const sandboxClockArea = {
  name: "sandbox-clock",
  collections: sandboxClockCollections,
  idPrefixes: [],
  machines: [],
  make: ({
    store,
    clock,
    needs,
  }: AreaContext<typeof sandboxClockCollections, Needs>): { sandboxClock: SandboxClock } => ({
    sandboxClock: createSandboxClock({
      store,
      clock,
      charges: needs.charges,
      cashouts: needs.cashouts,
      paymentLinks: needs.paymentLinks,
      disputes: needs.disputes,
      dispatcher: needs.webhooks.dispatcher,
    }),
  }),
  handlers: sandboxClockHandlers,
} as const satisfies AreaDeclaration;
