import type { AreaContext, AreaDeclaration } from "../kernel/area.ts";
import type { SettingsOf } from "../kernel/settings.ts";
import type { SandboxClock } from "../sandbox-clock/sandbox-clock.ts";
import type { VaultKeys } from "../vault/crypto.ts";
import { createEvents, type Events } from "./events.ts";
import { webhookHandlers } from "./handlers.ts";
import { createWebhooks, type Webhooks } from "./index.ts";
import { outboxOver } from "./outbox.ts";
import { webhookCollections } from "./records.ts";
import type { WebhookSender } from "./sender.ts";
import type { Resolver } from "./ssrf.ts";
import { DELIVERY_MACHINE, ENDPOINT_MACHINE } from "./state.ts";
import { createStreamLeases, type StreamLeases } from "./stream-leases.ts";

// Webhooks and events (spec/resources/webhooks.tsp, events.tsp): endpoints, deliveries, the dispatcher,
// the event API and its stream, as the list of areas sees them (domain/areas.ts). The outbox listens to the
// kernel's commit hooks for events any area records (./outbox.ts).

type Needs = { sandboxClock: Pick<SandboxClock, "refresh"> };
type Deps = {
  vaultKeys: VaultKeys;
  /** Sends webhook delivery attempts (adapters/webhook-sender.ts) and resolves endpoint host names. */
  webhookSender: WebhookSender;
  resolve: Resolver;
  /** [0, 1), the webhook retries' jitter (tests fix it). */
  random?: (() => number) | undefined;
  settings: SettingsOf<"webhooks" | "events">;
};
type Context = AreaContext<typeof webhookCollections, Needs, Deps>;

export interface WebhookServices {
  webhooks: Webhooks;
  events: Events;
  /** The open event streams' slots, counted per key in the store (EVENT_STREAMS_PER_KEY). */
  streamLeases: StreamLeases;
}

export const webhooksArea = {
  name: "webhooks",
  collections: webhookCollections,
  idPrefixes: ["we", "whd"],
  machines: [ENDPOINT_MACHINE, DELIVERY_MACHINE],
  make: ({ store, quietStore, hooks, clock, now, log, observer, deps }: Context): WebhookServices => {
    const outbox = outboxOver({
      store,
      quiet: quietStore,
      afterCommitTo: hooks.afterCommitTo,
      gateOutbox: hooks.gateOutbox,
    });
    return {
      webhooks: createWebhooks({
        outbox,
        clock,
        vaultKeys: deps.vaultKeys,
        options: deps.settings.webhooks,
        sender: deps.webhookSender,
        resolve: deps.resolve,
        random: deps.random,
        log,
        observer,
      }),
      events: createEvents({
        store,
        clock,
        retentionDays: deps.settings.events.retentionDays,
        signal: outbox.events,
        pollIntervalMs: deps.settings.webhooks.pollIntervalMs,
      }),
      streamLeases: createStreamLeases({ store, now }),
    };
  },
  handlers: webhookHandlers,
  jobs: ({ needs }: Context, { events, webhooks, streamLeases }: WebhookServices) => ({
    /** Deletes events older than their retention (EVENT_RETENTION_DAYS) whose deliveries are made. */
    sweepEvents: async () => {
      await needs.sandboxClock.refresh();
      return events.sweep();
    },
    /** Forgets finished webhook deliveries older than the attempt log's retention. */
    sweepWebhookLog: async () => {
      await needs.sandboxClock.refresh();
      return webhooks.sweepLog();
    },
    /** Deletes event-stream slots whose lease ended long ago (an instance died holding them). */
    sweepStreamLeases: () => streamLeases.sweep(),
  }),
} as const satisfies AreaDeclaration;
