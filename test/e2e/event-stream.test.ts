import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type PaymentsClient, unwrap } from "@payments/client";
import { listen } from "@payments/client/listen";
import { verifyWebhook } from "@payments/client/webhooks";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestClock } from "../support/clock.ts";
import { eventually } from "../support/eventually.ts";
import { childEnv, ROOT } from "../support/process.ts";
import { Receiver } from "../support/receiver.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { clientFor, createMerchant, createServiceKey } from "./fixtures.ts";

// The event stream (GET /v1/events/stream, spec/resources/events.tsp) and the listener that forwards it
// to a local receiver (clients/typescript/src/listen.ts, `npm run listen`): 1,000 events reach the
// receiver across a connection the server drops, none lost and none repeated, each signed so that our
// verifier and Stripe's SDK accept it; resuming with Last-Event-ID, the type filter, the environment's
// confinement, and the end of every stream when the server shuts down.

const stripe = new Stripe("sk_test_not_used_no_network");

let server: TestServer;
let client: PaymentsClient;
const receiver = new Receiver();
/** The stream responses the server has open, so a test can cut one from the server's side. */
const streams: ServerResponse[] = [];

beforeAll(async () => {
  await receiver.start();
  server = await startTestServer({ WEBHOOK_POLL_INTERVAL_MS: "100" });
  client = clientFor(server, server.sandboxKey);
  server.running.server.on("request", (req, res) => {
    if (req.url?.startsWith("/v1/events/stream")) streams.push(res);
  });
});
afterAll(async () => {
  await server.close();
  await receiver.stop();
});

/** Once `done()` holds (what the server and the listener do happens in the background). */
const until = (what: string, done: () => boolean, ms = 60_000) => eventually(what, done, (ok) => ok, ms);

/** Makes `count` merchants (one merchant.created event each), `parallel` requests at a time. */
async function makeMerchants(count: number, parallel = 8): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        next++;
        ids.push((await createMerchant(client, `Stream ${next}`)).id);
      }
    }),
  );
  return ids;
}

/** Reads a stream's text until `done` says it has enough, then closes it. */
async function readStream(res: Response, done: (text: string) => boolean): Promise<string> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + 30_000;
  while (!done(text)) {
    if (Date.now() > deadline) throw new Error(`the stream said only:\n${text}`);
    const { value, done: ended } = await reader.read();
    if (ended) break;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return text;
}

const idsIn = (text: string) => [...text.matchAll(/^id: (evt_\w+)$/gm)].map((m) => m[1]);

describe("the listener", () => {
  it("forwards 1,000 events across a dropped connection: verified, none lost, none repeated", {
    timeout: 180_000,
  }, async () => {
    const path = "/listen";
    const stop = new AbortController();
    const disconnects: string[] = [];
    let received = 0;
    const listener = listen({
      baseUrl: server.url,
      apiKey: await server.key(["webhooks"]),
      forwardTo: `${receiver.url}${path}`,
      types: ["merchant.created"],
      signal: stop.signal,
      reconnectDelayMs: 50,
      onEvent: () => {
        received++;
      },
      onDisconnect: (reason) => disconnects.push(reason),
    });
    expect(listener.secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    await until("the stream to open", () => streams.length === 1);

    const first = await makeMerchants(400);
    await until("400 events forwarded", () => received >= 400);
    // The server drops the connection mid-stream; the listener reconnects with Last-Event-ID.
    streams[0]?.destroy();
    const rest = await makeMerchants(600);
    await until("1,000 events forwarded", () => receiver.at(path).length >= 1000);
    stop.abort();
    // Every forward has been answered once the listener is done, so a repeat would be counted below.
    await listener.done;

    expect(disconnects.length).toBeGreaterThanOrEqual(1);
    expect(streams.length).toBeGreaterThanOrEqual(2);
    const deliveries = receiver.at(path);
    expect(deliveries).toHaveLength(1000);
    const events = deliveries.map((d) => {
      const header = String(d.headers["x-service-signature"]);
      const event = verifyWebhook({ payload: d.body, header, secret: listener.secret });
      expect(stripe.webhooks.constructEvent(d.body, header, listener.secret)).toEqual(event);
      expect(d.headers["x-service-event-id"]).toBe(event.id);
      return event as { id: string; type: string; merchant_id: string };
    });
    const ids = events.map((e) => e.id);
    expect(new Set(ids).size).toBe(1000); // none repeated
    expect(events.every((e) => e.type === "merchant.created")).toBe(true);
    // None lost: every merchant made has its event forwarded, in the order they were recorded.
    expect(new Set(events.map((e) => e.merchant_id))).toEqual(new Set([...first, ...rest]));
    const listed: string[] = [];
    let page = unwrap(await client.GET("/v1/events", { params: { query: { type: "merchant.created", limit: 100 } } }));
    for (;;) {
      listed.push(...page.data.map((e) => e.id));
      const last = page.data.at(-1);
      if (!page.has_more || !last) break;
      page = unwrap(
        await client.GET("/v1/events", {
          params: { query: { type: "merchant.created", limit: 100, starting_after: last.id } },
        }),
      );
    }
    expect(ids).toEqual(listed.reverse().slice(-1000));
  });

  it("runs as `npm run listen`: prints the secret, then one line per event, and forwards them signed", {
    timeout: 60_000,
  }, async () => {
    const key = await server.key(["webhooks"]);
    // Counted before the listener starts: it connects right after printing its secret.
    const before = streams.length;
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        resolve(ROOT, "clients/typescript/src/cli.ts"),
        "listen",
        "--forward-to",
        `${receiver.url}/cli`,
      ],
      { cwd: ROOT, env: childEnv({ PAYMENTS_KEY: key, PAYMENTS_URL: server.url }) },
    );
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      out += c;
    });
    const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
    await until("the secret", () => /whsec_\w{32}/.test(out), 30_000);
    await until("the stream to open", () => streams.length > before, 30_000);
    const [merchant] = await makeMerchants(1);
    await until("a line for the event", () => out.includes("merchant.created"), 30_000);
    child.kill("SIGINT");
    expect(await exited).toBe(0);
    const secret = out.match(/whsec_\w{32}/)?.[0] ?? "";
    const [delivery] = receiver.at("/cli");
    if (!delivery) throw new Error("nothing forwarded");
    const event = verifyWebhook({
      payload: delivery.body,
      header: String(delivery.headers["x-service-signature"]),
      secret,
    });
    expect(event).toMatchObject({ type: "merchant.created", merchant_id: merchant });
    expect(out).toMatch(new RegExp(`merchant\\.created\\s+${event.id} -> 200`));
  });
});

describe("GET /v1/events/stream", () => {
  const headers = () => ({ authorization: `Bearer ${server.sandboxKey}` });

  it("with follow=false, sends what there is, oldest first, then ends; after Last-Event-ID, what came after it", async () => {
    const own = await startTestServer();
    try {
      const ownClient = clientFor(own, own.sandboxKey);
      for (const name of ["One", "Two", "Three"]) await createMerchant(ownClient, name);
      const recorded = unwrap(await ownClient.GET("/v1/events", { params: { query: { limit: 100 } } })).data;
      expect(recorded.length).toBeGreaterThanOrEqual(3);
      const auth = { authorization: `Bearer ${own.sandboxKey}` };
      const res = await fetch(`${own.url}/v1/events/stream?follow=false`, { headers: auth });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(idsIn(text)).toEqual(recorded.map((e) => e.id).reverse());
      const last = recorded[0]?.id ?? "";
      const after = await fetch(`${own.url}/v1/events/stream?follow=false`, {
        headers: { ...auth, "last-event-id": last },
      });
      expect(await after.text()).toBe(": connected\n\n");
    } finally {
      await own.close();
    }
  });

  it("resumes after Last-Event-ID with the events recorded after it, oldest first, filtered by type", async () => {
    const ids = await makeMerchants(3, 1);
    const events = unwrap(
      await client.GET("/v1/events", { params: { query: { type: "merchant.created", limit: 3 } } }),
    );
    const [third, second, firstEvent] = events.data;
    expect(third && second && firstEvent && ids.length === 3).toBe(true);
    const res = await fetch(`${server.url}/v1/events/stream?type=merchant.created&type=payment.captured`, {
      headers: { ...headers(), "last-event-id": firstEvent?.id ?? "" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const text = await readStream(res, (t) => idsIn(t).length >= 2);
    expect(text.startsWith(": connected\n\n")).toBe(true);
    expect(idsIn(text)).toEqual([second?.id, third?.id]);
    expect(text).toContain(`event: merchant.created\ndata: ${JSON.stringify(second)}\n\n`);
  });

  it("refuses a Last-Event-ID of the other environment or of no event (400), and keys without the webhooks scope (403)", async () => {
    const live = clientFor(server, await server.key(["*"], { live: true }));
    const liveMerchant = await createMerchant(live, "Live");
    const liveEvents = unwrap(await live.GET("/v1/events", { params: { query: { limit: 1 } } }));
    expect(liveEvents.data[0]).toMatchObject({ merchant_id: liveMerchant.id });
    const other = await fetch(`${server.url}/v1/events/stream`, {
      headers: { ...headers(), "last-event-id": liveEvents.data[0]?.id ?? "" },
    });
    expect(other.status).toBe(400);
    expect(await other.json()).toMatchObject({ code: "invalid_request", param: "Last-Event-ID" });
    const forbidden = await fetch(`${server.url}/v1/events/stream`, {
      headers: { authorization: `Bearer ${await server.key(["merchants"])}` },
    });
    expect(forbidden.status).toBe(403);
  });

  it("shows a production stream production's events only", async () => {
    const liveKey = await server.key(["webhooks"], { live: true });
    const res = await fetch(`${server.url}/v1/events/stream`, { headers: { authorization: `Bearer ${liveKey}` } });
    // The stream's starting point is fixed before its headers are sent: what is made from now on is in it.
    // Until the production merchant's event: making its key records a production event first.
    const reading = readStream(res, (t) => t.includes('"type":"merchant.created"'));
    await makeMerchants(2, 1); // sandbox events: not for this stream
    const live = clientFor(server, await server.key(["merchants"], { live: true }));
    const made = await createMerchant(live, "Live two");
    const text = await reading;
    expect(text).toContain(`"merchant_id":"${made.id}"`);
    expect(text).toContain('"livemode":true');
    expect(text).not.toContain('"livemode":false');
  });
});

describe("a stream's key", () => {
  /** A stream's whole text, read until the server ends it. */
  const toEnd = async (res: Response) => {
    expect(res.status).toBe(200);
    return res.text();
  };
  const open = (own: TestServer, secret: string) =>
    fetch(`${own.url}/v1/events/stream`, { headers: { authorization: `Bearer ${secret}` } });

  it("ends the stream once the key is revoked, rotated without grace, or expired", async () => {
    const clock = new TestClock();
    const own = await startTestServer({}, { now: clock.now });
    try {
      const admin = clientFor(own, own.sandboxKey);
      const revoked = await createServiceKey(admin, ["webhooks"]);
      const rotated = await createServiceKey(admin, ["webhooks"]);
      const expiring = unwrap(
        await admin.POST("/v1/service_keys", {
          body: {
            name: "expiring",
            scopes: ["webhooks"],
            expires_at: new Date(clock.now().getTime() + 60_000).toISOString(),
          },
        }),
      );
      // Each stream is open (its headers are in) before its key changes.
      const streams = await Promise.all([revoked, rotated, expiring].map((k) => open(own, k.secret)));
      const ends = streams.map(toEnd);
      unwrap(await admin.POST("/v1/service_keys/{id}/revoke", { params: { path: { id: revoked.id } } }));
      unwrap(
        await admin.POST("/v1/service_keys/{id}/rotate", {
          params: { path: { id: rotated.id } },
          body: { grace_period_seconds: 0 },
        }),
      );
      clock.advance(61_000);
      // Each ends (cleanly: the text is read to its end) while the key that opened it would get 401.
      for (const text of await Promise.all(ends)) expect(text.startsWith(": connected\n\n")).toBe(true);
      for (const secret of [revoked.secret, rotated.secret, expiring.secret]) {
        expect((await open(own, secret)).status).toBe(401);
      }
    } finally {
      await own.close();
    }
  });

  it("holds at most EVENT_STREAMS_PER_KEY streams open at once: one more is 429 with Retry-After", async () => {
    const own = await startTestServer({ EVENT_STREAMS_PER_KEY: "2" });
    try {
      const admin = clientFor(own, own.sandboxKey);
      const key = await createServiceKey(admin, ["webhooks"]);
      const first = await open(own, key.secret);
      const second = await open(own, key.secret);
      expect([first.status, second.status]).toEqual([200, 200]);
      const third = await open(own, key.secret);
      expect(third.status).toBe(429);
      expect(third.headers.get("retry-after")).toBe("5");
      expect(await third.json()).toMatchObject({
        code: "rate_limited",
        detail: expect.stringContaining("EVENT_STREAMS_PER_KEY"),
      });
      // Another key has streams of its own.
      const other = await open(own, (await createServiceKey(admin, ["webhooks"])).secret);
      expect(other.status).toBe(200);
      // Closing one frees its place.
      await first.body?.cancel();
      const again = await eventually(
        "a stream's place to be freed",
        () => open(own, key.secret),
        (res) => res.status === 200,
      );
      expect(again.status).toBe(200);
      for (const res of [second, other, again]) await res.body?.cancel();
    } finally {
      await own.close();
    }
  });
});

describe("the event-stream cap across instances", () => {
  const open = (url: string, secret: string) =>
    fetch(`${url}/v1/events/stream`, { headers: { authorization: `Bearer ${secret}` } });

  it("holds EVENT_STREAMS_PER_KEY across two server instances on one store (not per process)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "payments-streams-"));
    const own = await startTestServer({ DATA_DIR: dir, EVENT_STREAMS_PER_KEY: "2" });
    const second = await own.another?.();
    if (!second) throw new Error("no second instance");
    try {
      const key = await createServiceKey(clientFor(own, own.sandboxKey), ["webhooks"]);
      const onFirst = await open(own.url, key.secret);
      const onSecond = await open(second.url, key.secret);
      expect([onFirst.status, onSecond.status]).toEqual([200, 200]);
      // A third, on either instance, is one too many for the key.
      for (const url of [own.url, second.url]) {
        const third = await open(url, key.secret);
        expect(third.status).toBe(429);
        expect(third.headers.get("retry-after")).toBe("5");
        await third.body?.cancel();
      }
      // Closing the stream on one instance frees a place on the other.
      await onFirst.body?.cancel();
      const again = await eventually(
        "a stream's place to be freed on the other instance",
        () => open(second.url, key.secret),
        (res) => res.status === 200,
      );
      for (const res of [onSecond, again]) await res.body?.cancel();
    } finally {
      await second.close();
      await own.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("shutdown", () => {
  it("ends every open stream, so the server closes without waiting for its shutdown timeout", {
    timeout: 60_000,
  }, async () => {
    // A shutdown timeout longer than the test's: a close() that waited for the open stream instead of
    // ending it would outlast the test, which then fails (no clock is read here).
    const own = await startTestServer({ SHUTDOWN_TIMEOUT_SECONDS: "600" });
    const res = await fetch(`${own.url}/v1/events/stream`, { headers: { authorization: `Bearer ${own.sandboxKey}` } });
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read(); // ": connected"
    // The stream ends cleanly (read to its end, not cut with an error), so the client reconnects elsewhere.
    const ended = (async () => {
      for (;;) if ((await reader.read()).done) return "ended";
    })();
    await own.close();
    expect(await ended).toBe("ended");
  });
});
