import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { openSqliteStore } from "../store/sqlite.ts";
import { type RateLimitStore, rateLimitCollections, rateLimits, SharedCounters } from "./rate-limits.ts";

// The rate-limit counts are shared through the store (429 rate_limited in spec/common/problems.tsp): two
// server instances on one database must see each other's requests within a sync, and finished windows
// are swept.

const silent = pino({ level: "silent" });
const stores: RateLimitStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});
function open(): RateLimitStore {
  const store = openSqliteStore({ path: ":memory:", collections: rateLimitCollections });
  stores.push(store);
  return store;
}

function counters(store: RateLimitStore, now: () => Date) {
  const c = new SharedCounters({ store, now, logger: silent, name: "key", syncMs: 60_000 });
  // The options express-rate-limit hands its store: only the window matters here.
  c.init({ windowMs: 1000 } as Parameters<SharedCounters["init"]>[0]);
  return c;
}

describe("SharedCounters", () => {
  it("counts locally at once, and shares the counts of every instance on one store", async () => {
    const store = open();
    let clock = new Date("2026-11-22T10:00:00.100Z");
    const now = () => clock;
    const a = counters(store, now);
    const b = counters(store, now);
    for (let i = 0; i < 3; i++) expect(a.increment("kid_1").totalHits).toBe(i + 1);
    expect(b.increment("kid_1").totalHits).toBe(1); // b has not heard of a's hits yet
    await a.sync();
    await b.sync();
    expect(b.increment("kid_1").totalHits).toBe(5); // 3 from a, 1 + 1 from b
    await a.sync(); // a has nothing new, so it reads nothing back yet
    expect(a.increment("kid_1").totalHits).toBe(4);
    await a.sync();
    expect(a.increment("kid_1").totalHits).toBe(6); // 3 + 1 from a, 1 shared from b (b's last is still local)
    expect(a.increment("kid_2").totalHits).toBe(1); // keys are counted apart

    // A new window starts from zero; the reset time is the window's end.
    clock = new Date("2026-11-22T10:00:01.000Z");
    const next = a.increment("kid_1");
    expect(next.totalHits).toBe(1);
    expect(next.resetTime?.toISOString()).toBe("2026-11-22T10:00:02.000Z");
  });

  it("writes nothing until there is something to share, and sweeps finished windows", async () => {
    const store = open();
    let clock = new Date("2026-11-22T10:00:00.000Z");
    const limits = rateLimits({
      store,
      now: () => clock,
      logger: silent,
      settings: {
        livePerSecond: 10,
        testPerSecond: 5,
        anonymousPerMinute: 60,
        paymentLinkPerMinute: 120,
        paymentAddressPerMinute: 10,
      },
    });
    await limits.flush();
    expect(await store.findAll("rate_limits", {})).toEqual([]);
    const c = counters(store, () => clock);
    c.increment("kid_9");
    await c.sync();
    expect((await store.findAll("rate_limits", {})).map((d) => d.hits)).toEqual([1]);
    expect(await limits.sweep()).toBe(0); // its window and the next are not over
    clock = new Date("2026-11-22T10:00:02.001Z");
    expect(await limits.sweep()).toBe(1);
  });
});
