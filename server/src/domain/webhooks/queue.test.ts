import { afterEach, describe, expect, it } from "vitest";
import { recordingObserver, testDomain } from "../../../test-support/domain.ts";
import type { Changes } from "../../store/port.ts";
import { openSqliteStore } from "../../store/sqlite.ts";
import { type AppStore, type AppTx, COLLECTIONS, type Docs } from "../areas.ts";
import { type EventType, recordEvent } from "../kernel/events.ts";
import { createDispatcher, LEASE_MARGIN_MS } from "./dispatcher.ts";
import type { DeliveryRequest, DeliveryResult, WebhookSender } from "./sender.ts";
import { addressPolicy } from "./ssrf.ts";

// The dispatcher's queue (./dispatcher.ts): fan-out, claim and lease, the limits on attempts in flight,
// what an instance does with a claim it holds too long, waking and stopping, and what it reports to the
// domain's observer. The sender is held by the test, so attempts stay in flight until it answers, and
// the clock moves only when the test moves it.

const TIMEOUT_MS = 10_000;
const LEASE_MS = TIMEOUT_MS + LEASE_MARGIN_MS;
const ok: DeliveryResult = { kind: "response", status: 200, body: "ok", latencyMs: 3 };
const serverError: DeliveryResult = { kind: "response", status: 500, body: "no", latencyMs: 3 };

/** Lets queued callbacks run, up to `turns` event-loop turns, until `done()` holds. */
async function until(done: () => boolean, turns = 2000): Promise<boolean> {
  for (let i = 0; i < turns && !done(); i++) await new Promise((r) => setImmediate(r));
  return done();
}

/**
 * Whether `done` holds within a bound of real time: for what waits on a real timer, such as a pass a
 * commit asks for, which starts MIN_PASS_GAP_MS after the last one (dispatcher.ts); a count of
 * event-loop turns can run out before that on a fast machine.
 */
async function within(done: () => boolean, ms = 5000): Promise<boolean> {
  const end = performance.now() + ms;
  while (!done() && performance.now() < end) await new Promise((r) => setTimeout(r, 1));
  return done();
}

/** A sender whose attempts wait until the test answers them; it tracks how many run at once. */
function heldSender() {
  const waiting: { request: DeliveryRequest; answer: (r: DeliveryResult) => void }[] = [];
  const sent: DeliveryRequest[] = [];
  const running = new Map<string, number>();
  let now = 0;
  let most = 0;
  const mostPer = new Map<string, number>();
  let auto: ((request: DeliveryRequest) => DeliveryResult) | null = null;
  const sender: WebhookSender = {
    send(request) {
      sent.push(request);
      now++;
      most = Math.max(most, now);
      running.set(request.url, (running.get(request.url) ?? 0) + 1);
      mostPer.set(request.url, Math.max(mostPer.get(request.url) ?? 0, running.get(request.url) ?? 0));
      return new Promise<DeliveryResult>((resolve) => {
        const answer = (r: DeliveryResult) => {
          now--;
          running.set(request.url, (running.get(request.url) ?? 1) - 1);
          resolve(r);
        };
        // In automatic mode each attempt answers a few turns later, so attempts overlap.
        if (auto) {
          const result = auto(request);
          setImmediate(() => setImmediate(() => answer(result)));
        } else {
          waiting.push({ request, answer });
        }
      });
    },
  };
  return {
    sender,
    sent,
    waiting,
    /** Answers every attempt waiting now. */
    answerAll(result: DeliveryResult = ok) {
      for (const w of waiting.splice(0)) w.answer(result);
    },
    /** From now on, answer every attempt by itself, a few turns after it started. */
    answerAutomatically(fn: (request: DeliveryRequest) => DeliveryResult = () => ok) {
      auto = fn;
      this.answerAll(ok);
    },
    get inFlight() {
      return now;
    },
    get most() {
      return most;
    },
    mostFor: (url: string) => mostPer.get(url) ?? 0,
  };
}

type Held = ReturnType<typeof heldSender>;

/** Store writes the test watches: every delivery claim, and a hook run after each transaction commits. */
function watchedStore() {
  const real = openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
  const claims: string[] = [];
  let eventReads = 0;
  let afterClaim: (() => void) | null = null;
  let holdEventRead: Promise<void> | null = null;
  let failEventReads = 0;
  const noteClaim = (collection: string, id: string, changes: Changes<never>) => {
    const set = (changes as { set?: { claim?: unknown } }).set;
    if (collection === "webhook_deliveries" && typeof set?.claim === "string") claims.push(id);
  };
  const store: AppStore = {
    ...real,
    update: ((collection: string, id: string, changes: Changes<never>, expect?: object) => {
      noteClaim(collection, id, changes);
      return (real.update as (...a: unknown[]) => unknown)(collection, id, changes, expect);
    }) as AppStore["update"],
    findAll: (async (collection: string, ...rest: unknown[]) => {
      const found = await (real.findAll as (...a: unknown[]) => Promise<unknown[]>)(collection, ...rest);
      if (collection === "events") {
        eventReads++;
        if (failEventReads > 0) {
          failEventReads--;
          throw new Error("the store is unavailable");
        }
        if (holdEventRead) await holdEventRead;
      }
      return found;
    }) as AppStore["findAll"],
    async transaction(fn) {
      let claimed = false;
      const result = await real.transaction((tx) =>
        fn({
          ...tx,
          update: ((collection: string, id: string, changes: Changes<never>, expect?: object) => {
            noteClaim(collection, id, changes);
            if (collection === "webhook_deliveries" && (changes as { set?: { claim?: unknown } }).set?.claim) {
              claimed = true;
            }
            return (tx.update as (...a: unknown[]) => unknown)(collection, id, changes, expect);
          }) as AppTx["update"],
        } as typeof tx),
      );
      if (claimed) afterClaim?.();
      return result;
    },
  };
  return {
    store,
    claims,
    get eventReads() {
      return eventReads;
    },
    /** Runs `hook` after each transaction that claimed a delivery (not after the fan-out's own claims). */
    afterClaim(hook: (() => void) | null) {
      afterClaim = hook;
    },
    /** Makes the next `n` reads of pending events fail. */
    failEventReads(n: number) {
      failEventReads = n;
    },
    /** Holds every read of pending events until the returned function is called. */
    holdEventReads(): () => void {
      let release = () => {};
      holdEventRead = new Promise<void>((r) => {
        release = r;
      });
      return () => {
        holdEventRead = null;
        release();
      };
    },
  };
}

interface Logged {
  level: "error" | "warn";
  details: Record<string, unknown>;
  message: string;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function setup(
  options: {
    concurrency?: number;
    endpointConcurrency?: number;
    held?: Held;
    start?: Date;
    disableAfterMs?: number;
  } = {},
) {
  const held = options.held ?? heldSender();
  const watched = watchedStore();
  const seen = recordingObserver();
  const logged: Logged[] = [];
  const t = testDomain({
    // Creation timestamps only ever increase in a process (kernel/time.ts createdAt): a test that
    // measures time from an event's creation starts later than every earlier test's clock.
    ...(options.start ? { start: options.start } : {}),
    store: watched.store,
    observer: seen.observer,
    webhooks: {
      sender: held.sender,
      random: () => 0.5,
      // No `debug`: the dispatcher must not need it.
      log: {
        error: (details, message) => logged.push({ level: "error", details: details as Logged["details"], message }),
        warn: (details, message) => logged.push({ level: "warn", details: details as Logged["details"], message }),
      },
      options: {
        timeoutMs: TIMEOUT_MS,
        concurrency: options.concurrency ?? 50,
        endpointConcurrency: options.endpointConcurrency ?? 10,
        sandboxSchedule: [5, 30],
        pollIntervalMs: 60_000,
        ...(options.disableAfterMs === undefined ? {} : { disableAfterMs: options.disableAfterMs }),
      },
    },
  });
  const { dispatcher } = t.domain.webhooks;
  cleanups.push(async () => {
    held.answerAll();
    await dispatcher.stop();
  });
  const endpoint = async (url: string, events: ("*" | EventType)[] = ["*"]) =>
    (
      await t.domain.webhooks.endpoints.create(t.caller(), {
        url,
        enabled_events: events as never,
        signature_scheme: "x_service_signature",
      })
    ).endpoint;
  const event = (type: EventType = "payment.captured", payload: object = { tx_id: "tx_1" }) =>
    t.store.transaction((tx) => recordEvent(tx, t.domain.clock, false, type as "payment.captured", payload as never));
  const deliveries = () => t.store.findAll("webhook_deliveries", {}, 1000, { by: "created_at", direction: "asc" });
  return { ...t, held, watched, seen, logged, dispatcher, endpoint, event, deliveries };
}

describe("fan-out and claim limits", () => {
  it("claims at fan-out what it has room for, in all and per endpoint, leased; the rest waits, due", async () => {
    const s = setup({ concurrency: 3, endpointConcurrency: 2 });
    await s.endpoint("http://127.0.0.1:4001/a");
    await s.endpoint("http://127.0.0.1:4002/b");
    s.advance(1);
    for (let i = 0; i < 3; i++) await s.event();
    const at = s.now().getTime();
    const run = s.dispatcher.runOnce();
    expect(await until(() => s.held.inFlight === 3)).toBe(true);
    await until(() => false, 20); // nothing more starts while all three slots are taken
    expect(s.held.sent).toHaveLength(3);
    expect(s.dispatcher.inFlight).toBe(3);

    const all = await s.deliveries();
    expect(all).toHaveLength(6);
    const claimed = all.filter((d) => d.claim !== null);
    expect(claimed).toHaveLength(3);
    for (const d of claimed) expect(Date.parse(d.next_attempt_at ?? "")).toBe(at + LEASE_MS);
    for (const d of all.filter((d) => d.claim === null)) {
      expect(d.status).toBe("pending");
      expect(Date.parse(d.next_attempt_at ?? "")).toBe(at);
    }
    // Claimed in the fan-out's own insert: no claim was written separately.
    expect(s.watched.claims).toEqual([]);
    // Each claim is this instance's token and a number of its own.
    const tokens = claimed.map((d) => d.claim as string);
    expect(new Set(tokens).size).toBe(3);
    for (const token of tokens) expect(token).toMatch(/^[0-9A-Za-z]{12}:[1-9][0-9]*$/);
    expect(new Set(tokens.map((c) => c.split(":")[0])).size).toBe(1);
    // At most two per endpoint.
    for (const url of ["http://127.0.0.1:4001/a", "http://127.0.0.1:4002/b"]) {
      expect(s.held.sent.filter((r) => r.url === url).length).toBeLessThanOrEqual(2);
    }

    s.held.answerAutomatically();
    await run;
    expect((await s.deliveries()).map((d) => d.status)).toEqual(Array(6).fill("succeeded"));
    expect(s.held.sent).toHaveLength(6);
    expect(s.held.most).toBe(3);
    expect(s.held.mostFor("http://127.0.0.1:4001/a")).toBe(2);
    expect(s.held.mostFor("http://127.0.0.1:4002/b")).toBe(2);
    // The three that waited were claimed one write each when room came.
    expect(s.watched.claims).toHaveLength(3);
    expect(s.logged).toEqual([]);
  });

  it("never runs more than its limits when due deliveries are claimed after fan-out", async () => {
    const s = setup({ concurrency: 4, endpointConcurrency: 2 });
    await s.endpoint("http://127.0.0.1:4001/a");
    await s.endpoint("http://127.0.0.1:4002/b");
    await s.endpoint("http://127.0.0.1:4003/c");
    s.advance(1);
    for (let i = 0; i < 6; i++) await s.event();
    s.held.answerAutomatically();
    await s.dispatcher.runOnce();
    expect(s.held.sent).toHaveLength(18);
    expect(s.held.most).toBe(4);
    for (const url of ["http://127.0.0.1:4001/a", "http://127.0.0.1:4002/b", "http://127.0.0.1:4003/c"]) {
      expect(s.held.mostFor(url)).toBe(2);
    }
    expect(new Set((await s.deliveries()).map((d) => d.status))).toEqual(new Set(["succeeded"]));
    expect(s.logged).toEqual([]);
  });

  it("keeps one endpoint's limit while another endpoint's attempts finish", async () => {
    const s = setup({ concurrency: 10, endpointConcurrency: 2 });
    await s.endpoint("http://127.0.0.1:4001/slow");
    s.advance(1);
    for (let i = 0; i < 5; i++) await s.event();
    s.dispatcher.start();
    expect(await until(() => s.held.inFlight === 2)).toBe(true);
    // One of the two answers: exactly one more starts, never three at once.
    s.held.waiting.shift()?.answer(ok);
    expect(await until(() => s.held.sent.length === 3)).toBe(true);
    await until(() => false, 20);
    expect(s.held.inFlight).toBe(2);
    expect(s.held.sent).toHaveLength(3);
    s.held.answerAutomatically();
    expect(await until(() => s.held.sent.length === 5 && s.held.inFlight === 0)).toBe(true);
    expect(s.held.mostFor("http://127.0.0.1:4001/slow")).toBe(2);
  });

  it("fans every pending event out in one pass, in batches, even with nothing to deliver", async () => {
    const s = setup();
    s.advance(1);
    for (let i = 0; i < 150; i++) await s.event();
    s.dispatcher.start();
    await s.dispatcher.stop(); // waits for the pass start() began
    expect(await s.store.findAll("events", { delivery_pending: true }, 1000)).toEqual([]);
  });

  it("makes one delivery per endpoint when a redelivery made one before the fan-out", async () => {
    const s = setup();
    const ep = await s.endpoint("http://127.0.0.1:4001/a");
    s.advance(1);
    const ev = await s.event();
    await s.domain.webhooks.deliveries.redeliver(s.caller(), ev.id, ep.id);
    s.held.answerAutomatically();
    await s.dispatcher.runOnce();
    const all = await s.deliveries();
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ mode: "manual", status: "succeeded" });
    expect(s.held.sent).toHaveLength(1);
    expect((await s.store.get("events", ev.id))?.delivery_pending).toBe(false);
    expect(s.logged).toEqual([]);
  });

  it("sends an endpoint the events of its own creation's instant, and never a test event by fan-out", async () => {
    const s = setup();
    s.advance(1);
    const ep = await s.endpoint("http://127.0.0.1:4001/a");
    const same = await s.event();
    // Created at the very instant of the event (two instances' clocks can agree): it subscribes to it.
    await s.store.update("webhook_endpoints", ep.id, { set: { created_at: same.created_at } });
    const test = await s.event("webhook_endpoint.test", { endpoint_id: "we_1" });
    s.held.answerAutomatically();
    await s.dispatcher.runOnce();
    expect(s.held.sent.map((r) => r.headers["x-service-event-id"])).toEqual([same.id]);
    expect((await s.store.get("events", test.id))?.delivery_pending).toBe(false);
  });
});

describe("leases and claims held too long", () => {
  /** A delivery that failed once and whose retry is due now (claimed by claimDue, not at fan-out). */
  async function dueRetry(s: ReturnType<typeof setup>) {
    await s.endpoint("http://127.0.0.1:4001/a");
    s.advance(1);
    await s.event();
    s.held.answerAutomatically(() => serverError);
    await s.dispatcher.runOnce();
    const [d] = await s.deliveries();
    s.at(d?.next_attempt_at as string);
    s.held.answerAutomatically();
    return d;
  }

  it("sends an attempt whose lease still covers its timeout when it starts", async () => {
    const s = setup();
    await dueRetry(s);
    // The claim is made; the attempt starts 5 s later, with exactly the timeout left on the lease.
    s.watched.afterClaim(() => s.advance(LEASE_MARGIN_MS / 1000));
    await s.dispatcher.runOnce();
    expect(s.held.sent).toHaveLength(2);
    expect((await s.deliveries())[0]?.status).toBe("succeeded");
  });

  it("leaves a claim it held too long to be taken over at the lease's end, without sending", async () => {
    const s = setup();
    const d = await dueRetry(s);
    s.watched.afterClaim(() => s.advance(LEASE_MARGIN_MS / 1000 + 0.001));
    await s.dispatcher.runOnce();
    expect(s.held.sent).toHaveLength(1);
    const after = (await s.deliveries())[0];
    expect(after).toMatchObject({ status: "pending", attempts: d?.attempts });
    expect(after?.claim).not.toBeNull();
    // Due again once the lease ends; then taken and sent.
    s.watched.afterClaim(null);
    s.at(after?.next_attempt_at as string);
    await s.dispatcher.runOnce();
    expect(s.held.sent).toHaveLength(2);
    expect((await s.deliveries())[0]).toMatchObject({ status: "succeeded", claim: null });
  });

  it("records nothing of an attempt that outlived its claim, and says so", async () => {
    const held = heldSender();
    const s = setup({ held });
    await s.endpoint("http://127.0.0.1:4001/a");
    s.advance(1);
    await s.event();
    const run = s.dispatcher.runOnce();
    expect(await until(() => held.inFlight === 1)).toBe(true);
    // Meanwhile another instance took the delivery over (its lease ran out).
    const [d] = await s.deliveries();
    await s.store.update("webhook_deliveries", d?.id as string, { set: { claim: "OtherInstanc:1" } });
    held.answerAll(ok);
    await run;
    expect((await s.deliveries())[0]).toMatchObject({ status: "pending", claim: "OtherInstanc:1", attempts: [] });
    expect(s.logged).toEqual([
      {
        level: "warn",
        details: { delivery: d?.id, attempt: 1 },
        message: "webhook attempt outlived its claim; its result was not recorded",
      },
    ]);
    expect(s.seen.of("attempt")).toEqual([]);
  });

  it("logs an attempt that threw, and retries it when its lease ends", async () => {
    let throwing = true;
    const s = setup({
      held: (() => {
        const h = heldSender();
        const send = h.sender.send;
        h.sender.send = (request) => (throwing ? Promise.reject(new Error("sender broke")) : send(request));
        return h;
      })(),
    });
    await s.endpoint("http://127.0.0.1:4001/a");
    s.advance(1);
    await s.event();
    await s.dispatcher.runOnce();
    const [d] = await s.deliveries();
    expect(s.logged).toEqual([
      {
        level: "error",
        details: { err: new Error("sender broke"), delivery: d?.id },
        message: "webhook attempt failed",
      },
    ]);
    expect(d).toMatchObject({ status: "pending", attempts: [] });
    throwing = false;
    s.held.answerAutomatically();
    s.at(d?.next_attempt_at as string);
    await s.dispatcher.runOnce();
    expect((await s.deliveries())[0]).toMatchObject({ status: "succeeded" });
  });

  it("fails a delivery whose event is gone, without sending it", async () => {
    const s = setup();
    await s.endpoint("http://127.0.0.1:4001/a");
    s.advance(1);
    const ev = await s.event();
    s.held.answerAutomatically(() => serverError);
    await s.dispatcher.runOnce();
    await s.store.delete("events", ev.id);
    const [d] = await s.deliveries();
    s.at(d?.next_attempt_at as string);
    await s.dispatcher.runOnce();
    expect(s.held.sent).toHaveLength(1);
    expect((await s.deliveries())[0]).toMatchObject({ status: "failed", next_attempt_at: null, claim: null });
    expect(s.seen.of("delivery failed")).toEqual([["delivery failed", false]]);
  });
});

describe("waking and stopping", () => {
  it("runs one more pass for a commit made during a pass", async () => {
    const s = setup();
    await s.endpoint("http://127.0.0.1:4001/a");
    s.held.answerAutomatically();
    const release = s.watched.holdEventReads();
    s.dispatcher.start();
    expect(await until(() => s.watched.eventReads === 1)).toBe(true);
    // A use case commits an event while the pass is held after its read.
    s.advance(1);
    await s.domain.merchants.create(s.caller(), { name: "During the pass" });
    // Passes never overlap: the commit asks for one more, it does not start a second beside it.
    await until(() => false, 20);
    expect(s.watched.eventReads).toBe(1);
    release();
    // The pass the commit asked for starts MIN_PASS_GAP_MS after the held one began: a real timer.
    expect(await within(() => s.held.sent.length === 1)).toBe(true);
    expect(JSON.parse(s.held.sent[0]?.body ?? "{}").type).toBe("merchant.created");
  });

  it("logs a pass that failed, and the next wake-up passes again", async () => {
    const s = setup();
    await s.endpoint("http://127.0.0.1:4001/a");
    s.held.answerAutomatically();
    s.watched.failEventReads(1);
    s.dispatcher.start();
    expect(await until(() => s.logged.length === 1)).toBe(true);
    expect(s.logged).toEqual([
      {
        level: "error",
        details: { err: new Error("the store is unavailable") },
        message: "webhook dispatcher pass failed; the next poll retries",
      },
    ]);
    s.advance(1);
    await s.event();
    s.dispatcher.wake();
    expect(await until(() => s.held.sent.length === 1)).toBe(true);
  });

  it("runs without an outbox signal (polling only)", async () => {
    const s = setup();
    const held = heldSender();
    held.answerAutomatically();
    const alone = createDispatcher({
      store: s.store,
      clock: s.domain.clock,
      vaultKeys: s.vaultKeys,
      sender: held.sender,
      settings: { ...s.domain.webhooks.options, pollIntervalMs: 60_000 },
      policyFor: () => addressPolicy(false, { allowLoopback: true, allowPrivate: false }),
    });
    await s.endpoint("http://127.0.0.1:4001/a");
    s.advance(1);
    await s.event();
    alone.start();
    expect(await until(() => held.sent.length === 1)).toBe(true);
    await alone.stop();
  });

  it("does no pass when woken before start or after stop, and stop without start resolves", async () => {
    const s = setup();
    s.dispatcher.wake();
    await until(() => false, 20);
    expect(s.watched.eventReads).toBe(0);
    await s.dispatcher.stop();
    s.dispatcher.wake();
    await until(() => false, 20);
    expect(s.watched.eventReads).toBe(0);
  });

  it("waits in stop() for the attempts in flight to be recorded, then takes no new work", async () => {
    const s = setup();
    await s.endpoint("http://127.0.0.1:4001/a");
    s.advance(1);
    await s.event();
    s.dispatcher.start();
    expect(await until(() => s.held.inFlight === 1)).toBe(true);
    let stopped = false;
    const stopping = s.dispatcher.stop().then(() => {
      stopped = true;
    });
    await until(() => false, 20);
    expect(stopped).toBe(false);
    s.held.answerAll(ok);
    await stopping;
    expect((await s.deliveries())[0]).toMatchObject({ status: "succeeded" });

    // Stopped: events are still fanned out, but their deliveries are left due for other instances.
    s.advance(1);
    await s.event();
    await s.dispatcher.runOnce();
    expect(s.held.sent).toHaveLength(1);
    const waiting = (await s.deliveries())[1];
    expect(waiting).toMatchObject({ status: "pending", claim: null });
    expect(Date.parse(waiting?.next_attempt_at ?? "")).toBe(s.now().getTime());
  });
});

describe("what the dispatcher reports to the domain's observer", () => {
  it("each recorded attempt's outcome, the first attempt's lag, a delivery that fails and a disabled endpoint", async () => {
    const s = setup({ start: new Date("2027-01-01T00:00:00Z") });
    await s.endpoint("http://127.0.0.1:4001/ok", ["payment.captured"]);
    await s.endpoint("http://127.0.0.1:4002/flaky", ["payment.captured"]);
    await s.endpoint("http://127.0.0.1:4003/gone", ["payment.captured"]);
    s.advance(1);
    await s.event();
    s.advance(2.5); // the event waits 2.5 s for its first attempt
    s.held.answerAutomatically((r) =>
      r.url.endsWith("/ok")
        ? ok
        : r.url.endsWith("/gone")
          ? { kind: "response", status: 410, body: "", latencyMs: 1 }
          : { kind: "error", error: "timeout", message: "no answer", latencyMs: TIMEOUT_MS },
    );
    await s.dispatcher.runOnce();
    const attempts = s.seen.of("attempt").map((r) => r[1]);
    expect(attempts).toHaveLength(3);
    expect(attempts).toEqual(
      expect.arrayContaining([
        { outcome: "succeeded", livemode: false, lagSeconds: 2.5 },
        { outcome: "timeout", livemode: false, lagSeconds: 2.5 },
        { outcome: "http_error", livemode: false, lagSeconds: 2.5 },
      ]),
    );
    expect(s.seen.of("endpoint disabled")).toEqual([["endpoint disabled", "gone", false]]);
    expect(s.seen.of("delivery failed")).toEqual([["delivery failed", false]]);

    // The flaky endpoint's retries: no lag (not a first attempt); the last one fails the delivery.
    for (let i = 0; i < 2; i++) {
      const due = (await s.deliveries()).find((d) => d.status === "pending");
      s.at(due?.next_attempt_at as string);
      await s.dispatcher.runOnce();
    }
    expect(
      s.seen
        .of("attempt")
        .slice(3)
        .map((r) => r[1]),
    ).toEqual(expect.arrayContaining([{ outcome: "timeout", livemode: false, lagSeconds: null }]));
    expect(s.seen.of("delivery failed")).toHaveLength(2);
  });

  it("an endpoint disabled for failing through the whole window", async () => {
    const s = setup({ start: new Date("2029-01-01T00:00:00Z"), disableAfterMs: 3600_000 });
    await s.endpoint("http://127.0.0.1:4001/down", ["payment.captured"]);
    s.held.answerAutomatically(() => serverError);
    s.advance(1);
    await s.event();
    await s.dispatcher.runOnce();
    s.advance(3600);
    await s.event();
    await s.dispatcher.runOnce();
    expect(s.seen.of("endpoint disabled")).toEqual([["endpoint disabled", "failing", false]]);
  });

  it("no lag for a manual redelivery, which is not the event's first wait", async () => {
    const s = setup({ start: new Date("2028-01-01T00:00:00Z") });
    const ep = await s.endpoint("http://127.0.0.1:4001/a");
    s.advance(1);
    const ev = await s.event();
    s.held.answerAutomatically();
    await s.dispatcher.runOnce();
    s.advance(60);
    await s.domain.webhooks.deliveries.redeliver(s.caller(), ev.id, ep.id);
    await s.dispatcher.runOnce();
    // An endpoint made after the event never had it: its manual delivery's first attempt has no lag either.
    const later = await s.endpoint("http://127.0.0.1:4002/later");
    await s.domain.webhooks.deliveries.redeliver(s.caller(), ev.id, later.id);
    await s.dispatcher.runOnce();
    expect(s.seen.of("attempt").map((r) => (r[1] as { lagSeconds: unknown }).lagSeconds)).toEqual([0, null, null]);
    expect(s.seen.of("attempt").map((r) => (r[1] as { outcome: unknown }).outcome)).toEqual([
      "succeeded",
      "succeeded",
      "succeeded",
    ]);
  });
});

describe("the operator's trace", () => {
  it("logs one debug line per attempt when the log takes debug lines", async () => {
    const lines: { details: object; message: string }[] = [];
    const held = heldSender();
    const t = testDomain({
      start: new Date("2030-01-01T00:00:00Z"),
      webhooks: {
        sender: held.sender,
        log: { error: () => {}, warn: () => {}, debug: (details, message) => lines.push({ details, message }) },
      },
    });
    cleanups.push(() => t.domain.webhooks.dispatcher.stop());
    const { endpoint } = await t.domain.webhooks.endpoints.create(t.caller(), {
      url: "http://127.0.0.1:4001/a",
      enabled_events: ["*"],
      signature_scheme: "x_service_signature",
    });
    t.advance(1);
    const ev = await t.store.transaction((tx) =>
      recordEvent(tx, t.domain.clock, false, "payment.captured", { tx_id: "tx_1" } as never),
    );
    held.answerAutomatically(() => serverError);
    await t.domain.webhooks.dispatcher.runOnce();
    const [d] = await t.store.findAll("webhook_deliveries", {});
    expect(lines).toEqual([
      {
        message: "webhook attempt",
        details: {
          dispatcher: expect.stringMatching(/^[0-9A-Za-z]{12}$/),
          delivery: d?.id,
          event: ev.id,
          endpoint: endpoint.id,
          attempt: 1,
          status: 500,
          error: null,
          latency_ms: 3,
          recorded: true,
        },
      },
    ]);
  });
});
