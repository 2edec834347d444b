import { afterEach, describe, expect, it, vi } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import type { AppStore } from "../areas.ts";
import { createEvents, STREAM_WAKE_GAP_MS } from "./events.ts";
import type { OutboxSignal } from "./outbox.ts";

// The event stream's reading of the store (streamEvents, spec/resources/events.tsp): what a commit costs
// the open streams, and where a catch-up read without a resume point starts. End to end (the transport,
// the key's checks, the per-key limit): test/e2e/event-stream.test.ts.

/** A signal the test fires, as the outbox fires it after a commit that wrote events. */
function manualSignal() {
  const listeners = new Set<() => void>();
  const signal: OutboxSignal = {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return {
    signal,
    commit: () => {
      for (const listener of listeners) listener();
    },
  };
}

/** The store with its event reads counted. */
function counting(store: AppStore) {
  const counts = { reads: 0 };
  const counted: AppStore = {
    ...store,
    findAll: (c, w, l, o) => {
      if (c === "events") counts.reads++;
      return store.findAll(c, w, l, o);
    },
    list: (c, w, p) => {
      if (c === "events") counts.reads++;
      return store.list(c, w, p);
    },
  };
  return { store: counted, counts };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("event streams", () => {
  it("wake at most once per STREAM_WAKE_GAP_MS however many commits there are: a commit's cost does not grow with the streams", async () => {
    vi.useFakeTimers();
    const t = testDomain();
    const { store, counts } = counting(t.store);
    const { signal, commit } = manualSignal();
    const events = createEvents({ store, clock: t.domain.clock, signal, pollIntervalMs: 60_000 });
    const aborts = new AbortController();
    const streams = await Promise.all(Array.from({ length: 20 }, () => events.stream(t.caller(), { follow: true })));
    // Each stream reads once, then waits.
    const readers = streams.map((s) => s.messages(aborts.signal)[Symbol.asyncIterator]());
    const pending = readers.map((r) => r.next());
    await vi.advanceTimersByTimeAsync(0);
    const afterFirst = counts.reads;
    expect(afterFirst).toBe(20 + 20); // each stream's start (the newest event) and its first read

    for (let i = 0; i < 1000; i++) commit();
    await vi.advanceTimersByTimeAsync(STREAM_WAKE_GAP_MS);
    // One wake for the thousand commits: each stream read once more.
    expect(counts.reads - afterFirst).toBe(20);

    for (let i = 0; i < 1000; i++) commit();
    await vi.advanceTimersByTimeAsync(STREAM_WAKE_GAP_MS);
    expect(counts.reads - afterFirst).toBe(40);

    aborts.abort();
    await vi.advanceTimersByTimeAsync(0);
    await Promise.all(pending);
  });

  it("send what there is from the oldest on a catch-up read without a resume point, and from the next event when following", async () => {
    const t = testDomain();
    for (const name of ["One", "Two"]) await t.domain.merchants.create(t.caller(), { name });
    const recorded = (await t.store.list("events", { livemode: false }, { limit: 100 })).data;
    expect(recorded.length).toBeGreaterThanOrEqual(2);
    const catchUp = await t.domain.events.stream(t.caller(), { follow: false });
    const sent: string[] = [];
    for await (const m of catchUp.messages(new AbortController().signal)) sent.push(m.id);
    expect(sent).toEqual(recorded.map((e) => e.id).reverse());

    const following = await t.domain.events.stream(t.caller(), { follow: true });
    const aborts = new AbortController();
    const next = following.messages(aborts.signal)[Symbol.asyncIterator]().next();
    const made = await t.domain.merchants.create(t.caller(), { name: "Three" });
    const first = await next;
    aborts.abort();
    expect(first.value && JSON.parse(first.value.data)).toMatchObject({
      type: "merchant.created",
      merchant_id: made.id,
    });
  });

  it("are kept EVENT_RETENTION_DAYS on their environment's clock, then swept, unless their deliveries are not made yet", async () => {
    // Later than any other test of this file: production stamps from one series per process (kernel/time.ts).
    const t = testDomain({ start: new Date("2030-01-01T00:00:00Z") });
    const old = await t.domain.merchants.create(t.caller(), { name: "Old" });
    const oldLive = await t.domain.merchants.create(t.caller(true), { name: "Old live" });
    const recorded = await t.store.findAll("events", {});
    expect(recorded.length).toBeGreaterThanOrEqual(2);
    // Their deliveries made (as the dispatcher's fan-out marks them), but one's: it is kept.
    for (const e of recorded) await t.store.update("events", e.id, { set: { delivery_pending: false } });
    const pending = recorded.find((e) => e.livemode === false);
    if (!pending) throw new Error("no sandbox event");
    await t.store.update("events", pending.id, { set: { delivery_pending: true } });
    t.advance(30 * 86_400);
    const recent = await t.domain.merchants.create(t.caller(), { name: "Recent" });
    for (const e of await t.store.findAll("events", { delivery_pending: true })) {
      if (e.id !== pending.id) await t.store.update("events", e.id, { set: { delivery_pending: false } });
    }
    // Exactly 30 days old: kept.
    expect(await t.domain.jobs.sweepEvents()).toBe(0);
    t.advance(1);
    const deleted = await t.domain.jobs.sweepEvents();
    expect(deleted).toBe(recorded.length - 1);
    const left = await t.store.findAll("events", {});
    expect(left.some((e) => e.id === pending.id)).toBe(true);
    expect(left.some((e) => JSON.stringify(e).includes(recent.id))).toBe(true);
    expect(left.some((e) => JSON.stringify(e).includes(old.id) && e.id !== pending.id)).toBe(false);
    expect(left.some((e) => JSON.stringify(e).includes(oldLive.id))).toBe(false);
  });
});
