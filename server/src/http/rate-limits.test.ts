import type { AddressInfo } from "node:net";
import express from "express";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { openSqliteStore } from "../store/sqlite.ts";
import { adyenNotificationsPath } from "./public-operations.ts";
import { leaseSize, QuotaLeases, type RateLimitStore, rateLimitCollections, rateLimits } from "./rate-limits.ts";

// Rate limits hold across processes (429 rate_limited in spec/common/problems.tsp; docs/api.md "Rate
// limits"): every process on one store leases its quota from the window's count there, so together they
// never grant more than the limit, and a flood costs one store write per lease, not per request.

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

/** A process's limiter store with `limit` per one-second window. */
function leases(store: RateLimitStore, now: () => Date, limit: number, logger = silent) {
  const c = new QuotaLeases({ store, now, logger, name: "key", limitOf: () => limit });
  // The options express-rate-limit hands its store: only the window matters here.
  c.init({ windowMs: 1000 } as Parameters<QuotaLeases["init"]>[0]);
  return c;
}

/** How many of the answers granted the request (express-rate-limit refuses when totalHits > limit). */
const granted = (answers: { totalHits: number }[], limit: number) => answers.filter((a) => a.totalHits <= limit).length;

/** The store, counting the writes made through it. */
function counting(store: RateLimitStore) {
  const writes = { count: 0 };
  const counted = new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if ((name === "insert" || name === "update") && typeof value === "function") {
        return (...args: unknown[]) => {
          writes.count++;
          return value.apply(target, args);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { store: counted, writes };
}

describe("leaseSize", () => {
  it("is a twentieth of the limit, at least one", () => {
    expect([1, 5, 20, 25, 60, 100, 120, 1000].map(leaseSize)).toEqual([1, 1, 1, 2, 3, 5, 6, 50]);
  });
});

describe("QuotaLeases", () => {
  const clock = new Date("2026-11-22T10:00:00.100Z");
  const now = () => clock;

  it("grants exactly the limit per window between two processes flooding one store", async () => {
    const store = open();
    const a = leases(store, now, 100);
    const b = leases(store, now, 100);
    const answers = [];
    for (let i = 0; i < 150; i++) {
      answers.push(await a.increment("kid_1"), await b.increment("kid_1"));
    }
    expect(granted(answers, 100)).toBe(100);
    // The window's document: its count is the quota handed out, never more than the limit.
    const window = Math.floor(clock.getTime() / 1000);
    expect((await store.findAll("rate_limits", {})).map((d) => [d.id, d.hits])).toEqual([[`key:kid_1:${window}`, 100]]);
  });

  it("grants exactly the limit to concurrent requests in both processes", async () => {
    const store = open();
    const a = leases(store, now, 25);
    const b = leases(store, now, 25);
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).increment("kid_1")));
    expect(granted(answers, 25)).toBe(25);
  });

  it("loses at most a lease less one per process to quota leased but unused", async () => {
    const store = open();
    const a = leases(store, now, 100);
    const b = leases(store, now, 100);
    expect((await a.increment("kid_1")).totalHits).toBe(1); // a leases 5 and uses 1
    const fromB = [];
    for (let i = 0; i < 200; i++) fromB.push(await b.increment("kid_1"));
    expect(granted(fromB, 100)).toBe(95); // the 4 that a holds are a's to grant
    const fromA = [];
    for (let i = 0; i < 10; i++) fromA.push(await a.increment("kid_1"));
    expect(granted(fromA, 100)).toBe(4);
  });

  it("reports the requests counted so far, and starts a new window from zero", async () => {
    const store = open();
    let at = new Date("2026-11-22T10:00:00.100Z");
    const a = leases(store, () => at, 5);
    const hits = [];
    for (let i = 0; i < 7; i++) hits.push((await a.increment("kid_1")).totalHits);
    expect(hits).toEqual([1, 2, 3, 4, 5, 6, 6]);
    at = new Date("2026-11-22T10:00:01.000Z");
    const next = await a.increment("kid_1");
    expect(next.totalHits).toBe(1);
    expect(next.resetTime.toISOString()).toBe("2026-11-22T10:00:02.000Z");
  });

  it("counts each client apart", async () => {
    const store = open();
    const a = leases(store, now, 2);
    await a.increment("kid_1");
    await a.increment("kid_1");
    expect((await a.increment("kid_1")).totalHits).toBe(3);
    expect((await a.increment("kid_2")).totalHits).toBe(1);
  });

  it("writes once per lease, and not at all for the refusals after the quota is spent", async () => {
    const { store, writes } = counting(open());
    const a = leases(store, now, 100);
    const b = leases(store, now, 100);
    for (let i = 0; i < 1000; i++) await (i % 2 === 0 ? a : b).increment("kid_1");
    // 20 leases of 5; a few more writes where both processes raced for the same document.
    expect(writes.count).toBeGreaterThanOrEqual(20);
    expect(writes.count).toBeLessThanOrEqual(24);
  });

  it("counts alone, up to the limit, while the store fails, and says so once a window", async () => {
    const store = open();
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => lines.push(line) });
    const a = leases(store, now, 10, logger);
    await store.close();
    const answers = [];
    for (let i = 0; i < 15; i++) answers.push(await a.increment("kid_1"));
    expect(granted(answers, 10)).toBe(10);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("counting in this process alone");
    stores.splice(0); // closed already
  });
});

describe("rateLimits", () => {
  it("writes nothing until a request is counted, and sweeps finished windows", async () => {
    const store = open();
    let clock = new Date("2026-11-22T10:00:00.000Z");
    const limits = rateLimits({
      store,
      now: () => clock,
      logger: silent,
      settings: {
        livePerSecond: 10,
        testPerSecond: 5,
        environmentKeys: 4,
        anonymousPerMinute: 60,
        paymentLinkPerMinute: 120,
        paymentAddressPerMinute: 10,
      },
    });
    await limits.flush();
    expect(await store.findAll("rate_limits", {})).toEqual([]);
    await leases(store, () => clock, 5).increment("kid_9");
    expect((await store.findAll("rate_limits", {})).map((d) => d.hits)).toEqual([1]);
    expect(await limits.sweep()).toBe(0); // its window and the next are not over
    clock = new Date("2026-11-22T10:00:02.001Z");
    expect(await limits.sweep()).toBe(1);
  });
});

describe("Adyen's notifications (receiveAdyenNotifications)", () => {
  /**
   * The limiters in front of two keyless routes: Adyen's notifications, answered 200 (`[accepted]`) or 401
   * (an item unsigned or wrongly signed) as the request's `x-answer` says, and any other /v1 path (404).
   */
  async function serve(anonymousPerMinute: number) {
    const limits = rateLimits({
      store: open(),
      // A window that never ends during the test: express-rate-limit gives a request back only before the
      // window's reset, which it compares with the real clock (Date.now()), not this one.
      now: () => new Date("2099-01-01T00:00:00.000Z"),
      logger: silent,
      settings: {
        livePerSecond: 10,
        testPerSecond: 5,
        environmentKeys: 4,
        anonymousPerMinute,
        paymentLinkPerMinute: 120,
        paymentAddressPerMinute: 10,
      },
    });
    const app = express();
    app.use(limits.perKey, limits.anonymous, limits.acquirerNotifications, ...limits.paymentLinks);
    app.post(adyenNotificationsPath, (req, res) => {
      const status = Number(req.headers["x-answer"] ?? 200);
      res.status(status).send(status === 200 ? "[accepted]" : "refused");
    });
    app.use((_req, res) => {
      res.status(404).end();
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`; // cast: listening on TCP
    const post = async (path: string, answer = 200) =>
      (await fetch(`${base}${path}`, { method: "POST", headers: { "x-answer": String(answer) } })).status;
    return { post, close: () => new Promise((resolve) => server.close(resolve)) };
  }

  it("never refuses accepted batches, however many, nor counts them as keyless requests", async () => {
    const { post, close } = await serve(5);
    try {
      const answers: number[] = [];
      for (let i = 0; i < 40; i++) answers.push(await post(adyenNotificationsPath));
      expect(answers.every((status) => status === 200)).toBe(true);
      // The keyless quota of the same address is untouched: 5 requests elsewhere pass, the 6th is refused.
      const elsewhere: number[] = [];
      for (let i = 0; i < 6; i++) elsewhere.push(await post("/v1/anything"));
      expect(elsewhere).toEqual([404, 404, 404, 404, 404, 429]);
      expect(await post(adyenNotificationsPath)).toBe(200);
    } finally {
      await close();
    }
  });

  it("refuses an address once it sent the limit's worth of refused requests in the minute, signed or not", async () => {
    const { post, close } = await serve(5);
    try {
      const answers: number[] = [];
      for (let i = 0; i < 5; i++) {
        answers.push(await post(adyenNotificationsPath)); // accepted between the refused ones: not counted
        answers.push(await post(adyenNotificationsPath, 401));
      }
      expect(answers).toEqual([200, 401, 200, 401, 200, 401, 200, 401, 200, 401]);
      // Five refused in the minute: the address is refused before its body is read, signed or not.
      expect(await post(adyenNotificationsPath)).toBe(429);
      expect(await post(adyenNotificationsPath, 401)).toBe(429);
    } finally {
      await close();
    }
  });
});
