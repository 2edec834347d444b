import type { Cashouts } from "../cashouts/cashouts.ts";
import type { Charges } from "../charges/charges.ts";
import type { Disputes } from "../disputes/disputes.ts";
import type { AreaContext, AreaDeclaration } from "../kernel/area.ts";
import { inBothEnvironments } from "../kernel/area.ts";
import type { SettingsOf } from "../kernel/settings.ts";
import type { SandboxClock } from "../sandbox-clock/sandbox-clock.ts";
import { acquirerNotificationHandlers } from "./handlers.ts";
import { type AcquirerNotifications, createAcquirerNotifications } from "./notifications.ts";
import { acquirerNotificationCollections } from "./records.ts";

// The acquirer's notifications (Adyen's webhooks to us), as the list of areas sees them (domain/areas.ts).

type Needs = {
  charges: Pick<Charges, "acquirerOutcomes">;
  disputes: Pick<Disputes, "acquirerOutcomes">;
  cashouts: Pick<Cashouts, "acquirerOutcome">;
  sandboxClock: Pick<SandboxClock, "refresh">;
};
/** The HMAC keys Adyen signs its notifications with (ADYEN_HMAC_KEYS); none: the endpoint answers 503. */
type Deps = { settings: SettingsOf<"acquirerNotifications"> };
type Context = AreaContext<typeof acquirerNotificationCollections, Needs, Deps>;

export const acquirerNotificationsArea = {
  name: "acquirer-notifications",
  collections: acquirerNotificationCollections,
  idPrefixes: [],
  machines: [],
  make: ({ store, clock, log, needs, deps }: Context): { acquirerNotifications: AcquirerNotifications } => ({
    acquirerNotifications: createAcquirerNotifications({
      store,
      clock,
      charges: needs.charges,
      disputes: needs.disputes,
      cashouts: needs.cashouts,
      adyenHmacKeys: deps.settings.acquirerNotifications.adyenHmacKeys,
      adyenEnvironments: deps.settings.acquirerNotifications.adyenEnvironments,
      log,
    }),
  }),
  handlers: acquirerNotificationHandlers,
  jobs: ({ needs }: Context, { acquirerNotifications }: { acquirerNotifications: AcquirerNotifications }) => ({
    /** Applies the acquirer's notifications a crash left unapplied, and those waiting for their object. */
    applyNotifications: () =>
      inBothEnvironments(needs.sandboxClock.refresh, (livemode) => acquirerNotifications.applyPending(livemode)),
  }),
} as const satisfies AreaDeclaration;
