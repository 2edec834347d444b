import type { CommitHooks } from "../kernel/commit-hooks.ts";
import type { WebhookStore } from "./records.ts";

// The outbox's wake-up: the kernel runs a commit hook (kernel/commit-hooks.ts) after each commit that
// wrote an event (any area's, recorded through kernel/events.ts) or a delivery (this area's), and the
// dispatcher and the event streams listen here, so a delivery starts within milliseconds of its event's
// commit on this instance; other instances find the work by polling the store (WEBHOOK_POLL_INTERVAL_MS).
// Only the dispatcher, whose own writes must not wake it again, writes through the quiet store.

/** What a commit that gives the dispatcher or a stream work writes to. */
const WATCHED = ["events", "webhook_deliveries"] as const;

export interface OutboxSignal {
  /** Calls `listener` after each commit that wrote an event or a delivery. Returns an unsubscribe function. */
  subscribe(listener: () => void): () => void;
}

export interface Outbox extends OutboxSignal {
  /** The store the area's use cases write through: their commits run the hooks. */
  store: WebhookStore;
  /** The same store without hooks, for the dispatcher alone. */
  unwatched: WebhookStore;
}

/** The outbox over the domain's hooked store (kernel/commit-hooks.ts withCommitHooks). */
export function outboxOver(hooked: CommitHooks & { store: WebhookStore; quiet: WebhookStore }): Outbox {
  return {
    store: hooked.store,
    unwatched: hooked.quiet,
    subscribe: (listener) => hooked.afterCommitTo(WATCHED, listener),
  };
}
