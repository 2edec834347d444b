import type { CommitHooks } from "../kernel/commit-hooks.ts";
import { OUTBOX_TOPIC } from "../kernel/commit-hooks.ts";
import { fanOutGate } from "./fan-out.ts";
import type { WebhookDocs, WebhookStore } from "./records.ts";

// The outbox's wake-up: the kernel runs a commit hook (kernel/commit-hooks.ts) after each commit that
// wrote an event (any area's, recorded through kernel/events.ts) or a delivery (this area's), and the
// dispatcher and the event streams listen here, so a delivery starts within milliseconds of its event's
// commit on this instance; other instances find the work by polling the store (WEBHOOK_POLL_INTERVAL_MS).
// Only the dispatcher, whose own writes must not wake it again, writes through the quiet store.
//
// The outbox's gate (./fan-out.ts fanOutGate) is set here too: an event no endpoint would get is recorded
// already fanned out (issue 36: one rewrite of each event, and one dispatcher pass, less per charge), so
// the dispatcher is woken only by commits that left it work: an event to fan out, or a delivery.

/** What a commit that gives the dispatcher work writes to: an event left to fan out, or a delivery. */
const WORK = [OUTBOX_TOPIC, "webhook_deliveries"] as const;
/** What a commit that gives the event streams something to read writes to. */
const EVENTS = ["events"] as const;

export interface OutboxSignal {
  /** Calls `listener` after each commit of the kind this signal is for. Returns an unsubscribe function. */
  subscribe(listener: () => void): () => void;
}

export interface Outbox extends OutboxSignal {
  /** The store the area's use cases write through: their commits run the hooks. */
  store: WebhookStore;
  /** The same store without hooks, for the dispatcher alone. */
  unwatched: WebhookStore;
  /**
   * `subscribe` (the dispatcher's): after each commit that recorded an event to fan out or wrote a
   * delivery. `events` (the event streams'): after each commit that recorded an event, delivered or not.
   */
  events: OutboxSignal;
}

/** The outbox over the domain's hooked store (kernel/commit-hooks.ts withCommitHooks), with its gate set. */
export function outboxOver(
  hooked: Pick<CommitHooks<WebhookDocs>, "afterCommitTo" | "gateOutbox"> & { store: WebhookStore; quiet: WebhookStore },
): Outbox {
  hooked.gateOutbox(fanOutGate());
  return {
    store: hooked.store,
    unwatched: hooked.quiet,
    subscribe: (listener) => hooked.afterCommitTo(WORK, listener),
    events: { subscribe: (listener) => hooked.afterCommitTo(EVENTS, listener) },
  };
}
