import type { Page, PageResult } from "../../store/port.ts";
import type { Caller } from "../kernel/caller.ts";
import type { Clock } from "../kernel/clock.ts";
import { inEnvironment } from "../kernel/environment.ts";
import { invalid } from "../kernel/errors.ts";
import { type EventDoc, type EventType, eventObject } from "../kernel/events.ts";
import { idFloor, idNow, idTimeMs } from "../kernel/ids.ts";
import type { EventStreamBody, QueryParams, StreamMessage } from "../kernel/operations.ts";
import { iso } from "../kernel/time.ts";
import type { OutboxSignal } from "./outbox.ts";
import type { WebhookStore } from "./records.ts";

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
/**
 * The shortest time between two wakes of the open streams by commits: however many commits record
 * events, each stream reads the store at most this often for them (plus its poll), so the cost of a
 * commit does not grow with the number of streams open (a commit only marks that there is news).
 */
export const STREAM_WAKE_GAP_MS = 50;
/** A stream that does not follow (`follow=false`) ends after at most this many events (the contract's limit). */
const CATCH_UP_MAX = 1_000;

export interface EventsDeps {
  store: WebhookStore;
  clock: Clock;
  /** Wakes a stream after a commit of this instance that wrote events. */
  signal: OutboxSignal;
  /** How often a stream looks in the store for events other instances wrote (WEBHOOK_POLL_INTERVAL_MS). */
  pollIntervalMs: number;
  /** How many days events are kept (EVENT_RETENTION_DAYS); default 30. */
  retentionDays?: number;
}

export interface StreamRequest {
  types?: EventType[] | undefined;
  lastEventId?: string | undefined;
  /** false: end once the events recorded so far (at most CATCH_UP_MAX) are sent. */
  follow: boolean;
}

/** The smallest event id at `ms`, or null where an epoch has no bound (before the first reset, after the last). */
const eventIdFloor = (ms: number | undefined) => (ms === undefined ? null : idFloor("evt", ms));

export function createEvents(deps: EventsDeps): Events {
  const { store, clock } = deps;
  const settleMs = store.kind === "mongodb" ? SETTLE_MS : 0;
  /** Ended when the server shuts down: every open stream ends with it (server.ts drainAndClose). */
  const shutdown = new AbortController();

  // Commits that wrote events wake the streams together, at most once every STREAM_WAKE_GAP_MS: a commit
  // counts itself and schedules the next wake if none is (constant work, however many streams are
  // open); the wake resolves every waiting stream, and each reads the store once.
  /** Commits of this instance that wrote events, so far. */
  let commits = 0;
  const waiting = new Set<() => void>();
  let wakeTimer: ReturnType<typeof setTimeout> | null = null;
  let lastWake = Number.NEGATIVE_INFINITY;
  const wakeAll = () => {
    wakeTimer = null;
    lastWake = performance.now();
    const woken = [...waiting];
    waiting.clear();
    for (const resolve of woken) resolve();
  };
  deps.signal.subscribe(() => {
    commits++;
    if (wakeTimer !== null || waiting.size === 0) return;
    wakeTimer = setTimeout(wakeAll, Math.max(0, lastWake + STREAM_WAKE_GAP_MS - performance.now()));
    wakeTimer.unref?.();
  });

  /**
   * Resolves after the next wake by a commit, `ms`, or an abort. A stream that missed a commit while it
   * read (`seen`, the count when its read began, is behind) reads again at once, but no sooner than
   * STREAM_WAKE_GAP_MS after that read began (`readAt`).
   */
  function wake(signal: AbortSignal, ms: number, seen: number, readAt: number): Promise<void> {
    return new Promise((resolve) => {
      const missed = seen !== commits;
      const done = () => {
        clearTimeout(timer);
        waiting.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, missed ? Math.max(0, readAt + STREAM_WAKE_GAP_MS - performance.now()) : ms);
      if (!missed) waiting.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  /**
   * The epochs of an environment's events: a sandbox clock reset (domain/sandbox-clock) takes the
   * sandbox's time back, so events made after it may carry earlier times than events made before it.
   * The stream therefore goes epoch by epoch, in the order they were made (ids carry the server's time:
   * kernel/ids.ts), and within an epoch in the store's listing order, (created_at, id). Epoch k holds
   * the events made from the k-th reset (its id floor `from`) to the next one (`until`); production has
   * one epoch.
   */
  function epochBounds(livemode: boolean, k: number): { from: string | null; until: string | null } {
    const resets = clock.resets(livemode);
    return { from: eventIdFloor(k === 0 ? undefined : resets[k - 1]), until: eventIdFloor(resets[k]) };
  }

  /** The epoch an event was made in. */
  const epochOf = (livemode: boolean, id: string) => clock.resets(livemode).filter((at) => at <= idTimeMs(id)).length;

  /**
   * The epoch's events after `cursor` (its id; null: from the epoch's first), oldest first, at most one
   * batch, with those made after the epoch (`until`) left out: `passed` is the id of the last one read
   * (the next read's cursor), null if none was.
   */
  async function after(
    livemode: boolean,
    k: number,
    cursor: string | null,
  ): Promise<{ events: EventDoc[]; passed: string | null; more: boolean }> {
    const { from, until } = epochBounds(livemode, k);
    const where = { livemode, ...(from === null ? {} : { id: { $gte: from } }) };
    let read: EventDoc[];
    let more: boolean;
    if (cursor === null) {
      const events = await store.findAll("events", where, STREAM_BATCH + 1, { by: "created_at", direction: "asc" });
      read = events.slice(0, STREAM_BATCH);
      more = events.length > STREAM_BATCH;
    } else {
      const page = await store.list("events", where, { endingBefore: cursor, limit: STREAM_BATCH });
      read = page.data.reverse();
      more = page.hasMore;
    }
    const events = until === null ? read : read.filter((e) => e.id < until);
    return { events, passed: read.at(-1)?.id ?? null, more };
  }

  async function* messages(
    livemode: boolean,
    start: { epoch: number; cursor: string | null },
    types: Set<string> | null,
    follow: boolean,
    signal: AbortSignal,
  ): AsyncGenerator<StreamMessage> {
    let { epoch, cursor } = start;
    let sent = 0;
    while (!signal.aborted) {
      const seen = commits;
      const readAt = performance.now();
      const { events, passed, more } = await after(livemode, epoch, cursor);
      const current = epoch === clock.resets(livemode).length;
      // Only the current epoch's newest events may still be committing (an earlier epoch ended at a reset).
      const horizon = settleMs > 0 && current ? iso(new Date(clock.now(livemode).getTime() - settleMs)) : null;
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
      if (!held && passed !== null) cursor = passed;
      if (more && !held) continue;
      if (!held && !current) {
        // This epoch is done: on to the next, from its first event.
        epoch++;
        cursor = null;
        continue;
      }
      if (!follow && !held) return;
      await wake(signal, held ? settleMs : deps.pollIntervalMs, held ? commits : seen, readAt);
    }
  }

  return {
    async get(caller: Caller, id: string): Promise<EventDoc> {
      return inEnvironment(await store.get("events", id), caller.livemode, "event", id);
    },

    list: (caller: Caller, filter: Pick<QueryParams<"listEvents">, "type">, page: Page) =>
      store.list("events", { livemode: caller.livemode, ...(filter.type ? { type: filter.type } : {}) }, page),

    /**
     * GET /v1/events/stream: the caller's environment's events from after `lastEventId`; without it,
     * from now on when following, or from the oldest kept for a catch-up read (`follow: false`).
     */
    async stream(caller: Caller, request: StreamRequest): Promise<EventStreamBody> {
      const { livemode } = caller;
      let start: { epoch: number; cursor: string | null };
      if (request.lastEventId !== undefined) {
        const last = await store.get("events", request.lastEventId);
        if (!last || last.livemode !== livemode) {
          throw invalid("Last-Event-ID", `names no event of this environment (${request.lastEventId})`);
        }
        start = { epoch: epochOf(livemode, last.id), cursor: last.id };
      } else if (!request.follow) {
        // A catch-up read with no resume point sends what there is, oldest first (at most CATCH_UP_MAX;
        // the last one's id resumes the next read): EventStreamParameters.follow.
        start = { epoch: 0, cursor: null };
      } else {
        // Following with no resume point: from the next event recorded (in the current epoch).
        const epoch = clock.resets(livemode).length;
        const { from } = epochBounds(livemode, epoch);
        const where = { livemode, ...(from === null ? {} : { id: { $gte: from } }) };
        start = { epoch, cursor: (await store.list("events", where, { limit: 1 })).data[0]?.id ?? null };
      }
      const types = request.types && request.types.length > 0 ? new Set<string>(request.types) : null;
      return {
        kind: "event-stream",
        messages: (signal) =>
          messages(livemode, start, types, request.follow, AbortSignal.any([signal, shutdown.signal])),
      };
    },

    /**
     * Deletes the events older than the retention (EVENT_RETENTION_DAYS) on their environment's clock
     * (or, after a sandbox clock reset, on the server's),
     * except those whose deliveries are not made yet (`delivery_pending`, webhooks/fan-out.ts); returns
     * how many. A delivery still retrying an event deleted here is abandoned (delivery-attempt.ts); the
     * default retention is ten times the longest default retry schedule (about three days).
     */
    async sweep(): Promise<number> {
      const days = deps.retentionDays ?? 30;
      let deleted = 0;
      for (const livemode of [true, false]) {
        const cutoff = iso(new Date(clock.now(livemode).getTime() - days * 86_400_000));
        deleted += await store.deleteMany("events", {
          livemode,
          delivery_pending: { $ne: true },
          created_at: { $lt: cutoff },
        });
        // After a sandbox clock reset, events made on the advanced clock carry times after the sandbox's
        // now: their age on the server's clock (in their id) bounds how long they are kept.
        if (clock.resets(livemode).length > 0) {
          deleted += await store.deleteMany("events", {
            livemode,
            delivery_pending: { $ne: true },
            id: { $lt: idFloor("evt", idNow() - days * 86_400_000) },
          });
        }
      }
      return deleted;
    },

    /** Ends every open stream (graceful shutdown): their clients reconnect elsewhere with Last-Event-ID. */
    closeStreams(): void {
      shutdown.abort();
    },
  };
}

/** The events' service (listEvents, getEvent, the event stream's reads, the retention sweep). */
export interface Events {
  get(caller: Caller, id: string): Promise<EventDoc>;
  list: (caller: Caller, filter: Pick<QueryParams<"listEvents">, "type">, page: Page) => Promise<PageResult<EventDoc>>;
  /**
   * GET /v1/events/stream: the caller's environment's events from after `lastEventId`; without it,
   * from now on when following, or from the oldest kept for a catch-up read (`follow: false`).
   */
  stream(caller: Caller, request: StreamRequest): Promise<EventStreamBody>;
  /**
   * Deletes the events older than the retention (EVENT_RETENTION_DAYS) on their environment's clock
   * (or, after a sandbox clock reset, on the server's),
   * except those whose deliveries are not made yet (`delivery_pending`, webhooks/fan-out.ts); returns
   * how many. A delivery still retrying an event deleted here is abandoned (delivery-attempt.ts); the
   * default retention is ten times the longest default retry schedule (about three days).
   */
  sweep(): Promise<number>;
  /** Ends every open stream (graceful shutdown): their clients reconnect elsewhere with Last-Event-ID. */
  closeStreams(): void;
}
