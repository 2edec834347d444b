import type { Page } from "../../store/port.ts";
import type { AppStore } from "../collections.ts";
import type { Caller } from "../kernel/caller.ts";
import type { Clock } from "../kernel/clock.ts";
import { inEnvironment } from "../kernel/environment.ts";
import { invalid } from "../kernel/errors.ts";
import { type EventDoc, type EventType, eventObject } from "../kernel/events.ts";
import type { EventStreamBody, QueryParams, StreamMessage } from "../kernel/operations.ts";
import { iso } from "../kernel/time.ts";
import type { OutboxSignal } from "./outbox.ts";

// Reading events (getEvent, listEvents, streamEvents in spec/resources/events.tsp; scope `webhooks`).
// Events are recorded by every area through the kernel (kernel/events.ts); this is how an integrator
// reads them back, as a list or as a stream.
//
// The stream follows the store's listing order, (created_at, id), from a cursor: the last event sent, so
// a client resuming with Last-Event-ID gets every later event once. That order is the order of commits
// on SQLite (one writer: a transaction stamps its events while it holds the write lock). MongoDB commits
// transactions concurrently, so an event may commit a moment after a later-stamped one: there the stream
// holds back events younger than SETTLE_MS (on their environment's clock), which no transaction outlasts
// between stamping and committing.

/** Events read from the store per query. */
const STREAM_BATCH = 100;
/** On MongoDB: how old an event must be before the stream passes it (see above). */
const SETTLE_MS = 1_000;
/** A stream that does not follow (`follow=false`) ends after at most this many events (the contract's limit). */
const CATCH_UP_MAX = 1_000;

export interface EventsDeps {
  store: AppStore;
  clock: Clock;
  /** Wakes a stream after a commit of this instance that wrote events. */
  signal: OutboxSignal;
  /** How often a stream looks in the store for events other instances wrote (WEBHOOK_POLL_INTERVAL_MS). */
  pollIntervalMs: number;
}

export interface StreamRequest {
  types?: EventType[] | undefined;
  lastEventId?: string | undefined;
  /** false: end once the events recorded so far (at most CATCH_UP_MAX) are sent. */
  follow: boolean;
}

export function createEvents(deps: EventsDeps) {
  const { store, clock } = deps;
  const settleMs = store.kind === "mongodb" ? SETTLE_MS : 0;
  /** Ended when the server shuts down: every open stream ends with it (server.ts drainAndClose). */
  const shutdown = new AbortController();

  /** Resolves after the next commit of this instance that wrote events, the next poll, or an abort. */
  function wake(signal: AbortSignal, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        unsubscribe();
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      const unsubscribe = deps.signal.subscribe(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  /** The environment's events after `cursor` (its id; null: from the first), oldest first, at most one batch. */
  async function after(livemode: boolean, cursor: string | null): Promise<{ events: EventDoc[]; more: boolean }> {
    if (cursor === null) {
      const events = await store.findAll("events", { livemode }, STREAM_BATCH + 1, {
        by: "created_at",
        direction: "asc",
      });
      return { events: events.slice(0, STREAM_BATCH), more: events.length > STREAM_BATCH };
    }
    const page = await store.list("events", { livemode }, { endingBefore: cursor, limit: STREAM_BATCH });
    return { events: page.data.reverse(), more: page.hasMore };
  }

  async function* messages(
    livemode: boolean,
    start: string | null,
    types: Set<string> | null,
    follow: boolean,
    signal: AbortSignal,
  ): AsyncGenerator<StreamMessage> {
    let cursor = start;
    let sent = 0;
    while (!signal.aborted) {
      const { events, more } = await after(livemode, cursor);
      const horizon = settleMs > 0 ? iso(new Date(clock.now(livemode).getTime() - settleMs)) : null;
      let held = false;
      for (const event of events) {
        if (horizon !== null && event.created_at > horizon) {
          held = true;
          break;
        }
        cursor = event.id;
        if (types !== null && !types.has(event.type)) continue;
        yield { id: event.id, event: event.type, data: JSON.stringify(eventObject(event)) };
        sent++;
        if (signal.aborted || (!follow && sent >= CATCH_UP_MAX)) return;
      }
      if (more && !held) continue;
      if (!follow && !held) return;
      await wake(signal, held ? settleMs : deps.pollIntervalMs);
    }
  }

  return {
    async get(caller: Caller, id: string): Promise<EventDoc> {
      return inEnvironment(await store.get("events", id), caller.livemode, "event", id);
    },

    list: (caller: Caller, filter: Pick<QueryParams<"listEvents">, "type">, page: Page) =>
      store.list("events", { livemode: caller.livemode, ...(filter.type ? { type: filter.type } : {}) }, page),

    /** GET /v1/events/stream: the caller's environment's events from after `lastEventId` (or from now on). */
    async stream(caller: Caller, request: StreamRequest): Promise<EventStreamBody> {
      const { livemode } = caller;
      let start: string | null;
      if (request.lastEventId !== undefined) {
        const last = await store.get("events", request.lastEventId);
        if (!last || last.livemode !== livemode) {
          throw invalid("Last-Event-ID", `names no event of this environment (${request.lastEventId})`);
        }
        start = last.id;
      } else {
        start = (await store.list("events", { livemode }, { limit: 1 })).data[0]?.id ?? null;
      }
      const types = request.types && request.types.length > 0 ? new Set<string>(request.types) : null;
      return {
        kind: "event-stream",
        messages: (signal) =>
          messages(livemode, start, types, request.follow, AbortSignal.any([signal, shutdown.signal])),
      };
    },

    /** Ends every open stream (graceful shutdown): their clients reconnect elsewhere with Last-Event-ID. */
    closeStreams(): void {
      shutdown.abort();
    },
  };
}

export type Events = ReturnType<typeof createEvents>;
