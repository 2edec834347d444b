import { describe, expect, it, vi } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import { openSqliteStore } from "../../store/sqlite.ts";
import { COLLECTIONS, type Docs } from "../areas.ts";
import type { Caller } from "../kernel/caller.ts";
import { DomainError } from "../kernel/errors.ts";
import type { EventDoc, EventPayload, EventType } from "../kernel/events.ts";
import { eventObject, recordEvent } from "../kernel/events.ts";
import { iso } from "../kernel/time.ts";
import { USER_AGENT } from "./attempts.ts";
import { LEASE_MARGIN_MS } from "./dispatcher.ts";
import type { EnabledEvent, SignatureScheme } from "./records.ts";
import { parseSchedule } from "./schedule.ts";
import type { DeliveryRequest, DeliveryResult, WebhookSender } from "./sender.ts";
import { signature, standardWebhooksHeaders } from "./signing.ts";

// The dispatcher with a scripted sender and a clock the test moves: the attempt log, the retry
// schedule, auto-disable, redelivery, recovery, rotation and the lease, without a network and without
// waiting for a retry to come due.

const SANDBOX_SCHEDULE = "5,30,120,600,1800,3600";
const ok = (status = 200, body = "ok"): DeliveryResult => ({ kind: "response", status, body, latencyMs: 12 });
const fail = (error: "timeout" | "connection_error" = "timeout"): DeliveryResult => ({
  kind: "error",
  error,
  message: error === "timeout" ? "no answer within 10000 ms" : "connect ECONNREFUSED 127.0.0.1:9",
  latencyMs: 10_000,
});

/** A sender that answers from a script and records every request. */
function scripted(answer: (request: DeliveryRequest, n: number) => DeliveryResult | Promise<DeliveryResult>) {
  const sent: DeliveryRequest[] = [];
  const sender: WebhookSender = {
    send: async (request) => {
      sent.push(request);
      return answer(request, sent.length);
    },
  };
  return { sent, sender };
}

function setup(answer: Parameters<typeof scripted>[0], options: { disableAfterSeconds?: number; start?: Date } = {}) {
  const { sent, sender } = scripted(answer);
  /** What the dispatcher logged as errors (an attempt that threw, a pass that failed). */
  const errors: string[] = [];
  const t = testDomain({
    ...(options.start ? { start: options.start } : {}),
    webhooks: {
      sender,
      // receiver.example (production endpoints must be public https) at a documentation address; the
      // scripted sender never connects anywhere.
      resolve: async (hostname: string) => {
        if (hostname !== "receiver.example")
          throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
        return [{ address: "93.184.216.34", family: 4 }];
      },
      random: () => 0.5, // no jitter: the schedule exactly
      log: { error: (_details, message) => errors.push(message), warn: () => {} },
      options: {
        sandboxSchedule: parseSchedule(SANDBOX_SCHEDULE),
        liveSchedule: parseSchedule("60,300"),
        disableAfterMs: (options.disableAfterSeconds ?? 5 * 86400) * 1000,
        pollIntervalMs: 60_000,
      },
    },
  });
  const { endpoints, deliveries, dispatcher } = t.domain.webhooks;
  return { ...t, t, sent, errors, endpoints, deliveries, dispatcher, caller: t.caller() };
}

type Setup = ReturnType<typeof setup>;

async function endpoint(
  s: Setup,
  enabled_events: EnabledEvent[] = ["*"],
  url = "http://127.0.0.1:4242/hooks",
  signature_scheme: SignatureScheme = "x_service_signature",
) {
  return s.endpoints.create(s.caller, { url, enabled_events, signature_scheme });
}

/** A `payment.captured` payload as the contract shapes it (the dispatcher sends payloads, never reads them). */
const captured = (tx_id: string): EventPayload<"payment.captured"> => ({
  tx_id,
  merchant_id: "mch_9Lm2QwErTy7UiOp3AsDf5GhJ",
  amount: 2500,
  currency: "USD",
  status: "captured",
  payment_method_type: "card",
  amount_captured: 2500,
});

/** An event of `type` (its payload a payment.captured one: what matters here is how it is routed). */
async function event(s: Setup, type: EventType = "payment.captured", livemode = false): Promise<EventDoc> {
  s.advance(1);
  return s.store.transaction((tx) =>
    recordEvent(tx, s.domain.clock, livemode, type as "payment.captured", captured("tx_9Lm2QwErTy7UiOp3AsDf5GhJ")),
  );
}

async function deliveryOf(s: Setup, eventId: string, endpointId: string) {
  const found = await s.store.findOne("webhook_deliveries", { event_id: eventId, endpoint_id: endpointId });
  if (!found) throw new Error("no delivery");
  return found;
}

/** Runs every due attempt, then moves the clock to the next one due, until none is scheduled. */
async function runToEnd(s: Setup, deliveryId: string) {
  for (let i = 0; i < 100; i++) {
    await s.dispatcher.runOnce();
    const d = await s.store.get("webhook_deliveries", deliveryId);
    if (!d?.next_attempt_at || d.status !== "pending") return;
    s.at(d.next_attempt_at);
  }
  throw new Error("the delivery never finished");
}

async function domainError(promise: Promise<unknown>): Promise<DomainError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  return err as DomainError;
}

describe("fan-out and signed delivery", () => {
  it("sends each event to the enabled endpoints that subscribe to it, signed over the exact body", async () => {
    const s = setup(() => ok());
    const all = await endpoint(s, ["*"]);
    const refunds = await endpoint(s, ["payment.refunded"], "http://127.0.0.1:4243/refunds");
    const captured = await event(s, "payment.captured");
    s.advance(1);
    await s.dispatcher.runOnce();

    expect(s.sent).toHaveLength(1); // the refunds endpoint does not take payment.captured
    const [request] = s.sent as [DeliveryRequest];
    expect(request.url).toBe("http://127.0.0.1:4242/hooks");
    expect(request.body).toBe(JSON.stringify(eventObject(captured)));
    const t = Math.floor(s.now().getTime() / 1000);
    expect(request.headers).toEqual({
      "content-type": "application/json",
      "user-agent": USER_AGENT,
      "x-service-signature": `t=${t},v1=${signature(t, request.body, all.secret)}`,
      "x-service-event-id": captured.id,
      "x-service-delivery-id": expect.stringMatching(/^whd_[0-9A-Za-z]{24}$/),
      "x-service-delivery-attempt": "1",
    });
    const delivery = await deliveryOf(s, captured.id, all.endpoint.id);
    expect(delivery).toMatchObject({ status: "succeeded", next_attempt_at: null, claim: null });
    expect(delivery.attempts).toEqual([
      {
        number: 1,
        trigger: "automatic",
        attempted_at: expect.any(String),
        status_code: 200,
        error: null,
        error_message: null,
        latency_ms: 12,
        response_body: "ok",
        succeeded: true,
        next_attempt_at: null,
      },
    ]);
    expect(await s.store.findOne("webhook_deliveries", { endpoint_id: refunds.endpoint.id })).toBeNull();
    // The outbox flag is cleared with the fan-out, so a second pass creates nothing.
    expect((await s.store.get("events", captured.id))?.delivery_pending).toBe(false);
    await s.dispatcher.runOnce();
    expect(s.sent).toHaveLength(1);
  });

  it("does not send events from before an endpoint existed, or of the other environment, or to a disabled one", async () => {
    const s = setup(() => ok());
    const before = await event(s);
    const ep = await endpoint(s);
    const disabled = await endpoint(s, ["*"], "http://127.0.0.1:4244/off");
    await s.endpoints.update(s.caller, disabled.endpoint.id, { disabled: true });
    await event(s, "payment.captured", true);
    const after = await event(s);
    await s.dispatcher.runOnce();
    expect(s.sent.map((r) => r.headers["x-service-event-id"])).toEqual([after.id]);
    expect(await s.store.findOne("webhook_deliveries", { event_id: before.id })).toBeNull();
    expect(s.sent[0]?.url).toBe(ep.endpoint.url);
  });

  it("never stores the signing secret in clear", async () => {
    const s = setup(() => ok());
    const { endpoint: ep, secret } = await endpoint(s);
    expect(secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    const stored = JSON.stringify(await s.store.get("webhook_endpoints", ep.id));
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain("whsec_");
  });
});

describe("retries and the attempt log", () => {
  it("retries on the sandbox schedule, then fails; every attempt is logged with its next retry", async () => {
    const s = setup(() => ok(500, "upstream unavailable"));
    const ep = await endpoint(s);
    const ev = await event(s);
    const started = s.now().getTime();
    await s.dispatcher.runOnce();
    const first = await deliveryOf(s, ev.id, ep.endpoint.id);
    await runToEnd(s, first.id);

    const d = await deliveryOf(s, ev.id, ep.endpoint.id);
    const schedule = parseSchedule(SANDBOX_SCHEDULE);
    expect(d.status).toBe("failed");
    expect(d.next_attempt_at).toBeNull();
    expect(d.attempts).toHaveLength(schedule.length + 1);
    let expected = started;
    d.attempts.forEach((a, i) => {
      expect(a).toMatchObject({ number: i + 1, trigger: "automatic", status_code: 500, succeeded: false });
      expect(a.response_body).toBe("upstream unavailable");
      expect(Date.parse(a.attempted_at)).toBe(expected);
      const delay = schedule[i];
      if (delay === undefined) expect(a.next_attempt_at).toBeNull();
      else {
        expected += delay * 1000;
        expect(Date.parse(a.next_attempt_at ?? "")).toBe(expected);
      }
    });
    expect(s.sent).toHaveLength(schedule.length + 1);
    expect(s.sent.map((r) => r.headers["x-service-delivery-attempt"])).toEqual(
      schedule.concat(0).map((_, i) => String(i + 1)),
    );
  });

  it("logs a timeout, a network error, a redirect (not followed) and a 500 before the success", async () => {
    const answers = [fail("timeout"), fail("connection_error"), ok(302, ""), ok(500, "oops"), ok(204, "")];
    const s = setup((_r, n) => answers[n - 1] ?? ok());
    const ep = await endpoint(s);
    const ev = await event(s);
    await s.dispatcher.runOnce();
    await runToEnd(s, (await deliveryOf(s, ev.id, ep.endpoint.id)).id);
    const d = await deliveryOf(s, ev.id, ep.endpoint.id);
    expect(d.status).toBe("succeeded");
    expect(
      d.attempts.map((a) => [a.status_code, a.error, a.succeeded, a.next_attempt_at === null, a.response_body]),
    ).toEqual([
      [null, "timeout", false, false, null],
      [null, "connection_error", false, false, null],
      [302, null, false, false, ""],
      [500, null, false, false, "oops"],
      [204, null, true, true, ""],
    ]);
    expect(d.attempts[0]?.error_message).toBe("no answer within 10000 ms");
    // A success ends the endpoint's failure streak.
    expect((await s.endpoints.get(s.caller, ep.endpoint.id)).failing_since).toBeNull();
  });

  it("marks the failure streak on the endpoint and masks card numbers in what it keeps", async () => {
    const s = setup(() => ok(400, "bad card 4242424242424242"));
    const ep = await endpoint(s);
    const ev = await event(s);
    await s.dispatcher.runOnce();
    const d = await deliveryOf(s, ev.id, ep.endpoint.id);
    expect(d.attempts[0]?.response_body).toBe("bad card 4242********4242");
    expect((await s.endpoints.get(s.caller, ep.endpoint.id)).failing_since).toBe(d.attempts[0]?.attempted_at);
  });

  it("a 410 disables the endpoint at once, ends the delivery and tells the other endpoints", async () => {
    const s = setup((request) => (request.url.endsWith("/gone") ? ok(410, "gone") : ok()));
    const gone = await endpoint(s, ["payment.captured"], "http://127.0.0.1:4242/gone");
    const watcher = await endpoint(s, ["webhook_endpoint.disabled"], "http://127.0.0.1:4242/watch");
    const ev = await event(s);
    await s.dispatcher.runOnce();

    const d = await deliveryOf(s, ev.id, gone.endpoint.id);
    expect(d).toMatchObject({ status: "failed", next_attempt_at: null });
    expect(d.attempts).toHaveLength(1);
    expect(await s.endpoints.get(s.caller, gone.endpoint.id)).toMatchObject({
      status: "disabled",
      disabled_reason: "gone",
    });
    const disabledEvent = await s.store.findOne("events", { type: "webhook_endpoint.disabled" });
    expect(disabledEvent?.payload).toEqual({
      endpoint_id: gone.endpoint.id,
      url: "http://127.0.0.1:4242/gone",
      reason: "gone",
      failing_since: null,
    });
    const toWatcher = s.sent.filter((r) => r.url.endsWith("/watch"));
    expect(toWatcher.map((r) => JSON.parse(r.body).type)).toEqual(["webhook_endpoint.disabled"]);
    expect(await s.store.findOne("webhook_deliveries", { endpoint_id: watcher.endpoint.id })).toMatchObject({
      status: "succeeded",
    });
    // Nothing more goes to it.
    await event(s);
    await s.dispatcher.runOnce();
    expect(s.sent.filter((r) => r.url.endsWith("/gone"))).toHaveLength(1);
  });

  it("disables an endpoint that fails every attempt for WEBHOOK_DISABLE_AFTER_SECONDS, with an event", async () => {
    const s = setup(() => fail("connection_error"), { disableAfterSeconds: 3 * 3600 });
    const ep = await endpoint(s);
    const first = await event(s);
    await s.dispatcher.runOnce();
    const failingSince = (await s.endpoints.get(s.caller, ep.endpoint.id)).failing_since;
    expect(failingSince).not.toBeNull();
    // A new event every hour, each failing: after three hours of failures the endpoint is disabled.
    for (let hour = 1; hour <= 3; hour++) {
      s.advance(3600);
      await event(s);
      await s.dispatcher.runOnce();
      const status = (await s.endpoints.get(s.caller, ep.endpoint.id)).status;
      expect(status).toBe(hour < 3 ? "enabled" : "disabled");
    }
    expect(await s.endpoints.get(s.caller, ep.endpoint.id)).toMatchObject({
      disabled_reason: "failing",
      failing_since: failingSince,
    });
    expect((await s.store.findOne("events", { type: "webhook_endpoint.disabled" }))?.payload).toMatchObject({
      reason: "failing",
      failing_since: failingSince,
    });
    // Its deliveries still waiting for a retry end as failed, without another attempt.
    const before = s.sent.length;
    s.advance(86_400);
    await s.dispatcher.runOnce();
    expect(s.sent).toHaveLength(before);
    expect((await deliveryOf(s, first.id, ep.endpoint.id)).status).toBe("failed");
    // Enabling it again clears the streak.
    expect(await s.endpoints.update(s.caller, ep.endpoint.id, { disabled: false })).toMatchObject({
      status: "enabled",
      disabled_reason: null,
      failing_since: null,
    });
  });
});

describe("redelivery, recovery and test events", () => {
  it("redelivers a failed event once, without retries, and then succeeds", async () => {
    let up = false;
    const s = setup(() => (up ? ok() : ok(503)));
    const ep = await endpoint(s);
    const ev = await event(s);
    await s.dispatcher.runOnce();
    await runToEnd(s, (await deliveryOf(s, ev.id, ep.endpoint.id)).id);
    const failed = await deliveryOf(s, ev.id, ep.endpoint.id);
    expect(failed.status).toBe("failed");

    const again = await s.deliveries.redeliver(s.caller, ev.id, ep.endpoint.id);
    expect(again).toMatchObject({
      id: failed.id,
      status: "pending",
      mode: "manual",
      next_attempt_at: expect.any(String),
    });
    await s.dispatcher.runOnce();
    const stillDown = await deliveryOf(s, ev.id, ep.endpoint.id);
    expect(stillDown.status).toBe("failed"); // a manual attempt is not retried
    expect(stillDown.attempts.at(-1)).toMatchObject({ trigger: "manual", status_code: 503, next_attempt_at: null });

    up = true;
    await s.deliveries.redeliver(s.caller, ev.id, ep.endpoint.id);
    await s.dispatcher.runOnce();
    const done = await deliveryOf(s, ev.id, ep.endpoint.id);
    expect(done.status).toBe("succeeded");
    expect(done.attempts).toHaveLength(failed.attempts.length + 2);
    expect(s.sent.at(-1)?.headers["x-service-delivery-attempt"]).toBe(String(done.attempts.length));
  });

  it("redelivers a delivery waiting for a retry now, logs that attempt as manual, and keeps the retry schedule", async () => {
    const s = setup(() => ok(500, "upstream unavailable"));
    const ep = await endpoint(s);
    const ev = await event(s);
    await s.dispatcher.runOnce();
    const waiting = await deliveryOf(s, ev.id, ep.endpoint.id);
    expect(waiting).toMatchObject({ status: "pending", mode: "automatic" });
    expect(waiting.attempts.map((a) => a.trigger)).toEqual(["automatic"]);

    // Asked for by hand before the first retry is due: it is made now, and logged as manual.
    s.advance(1);
    const again = await s.deliveries.redeliver(s.caller, ev.id, ep.endpoint.id);
    expect(again).toMatchObject({
      id: waiting.id,
      status: "pending",
      mode: "automatic",
      next_attempt_at: iso(s.now()),
    });
    await s.dispatcher.runOnce();
    const afterManual = await deliveryOf(s, ev.id, ep.endpoint.id);
    expect(afterManual.attempts.map((a) => a.trigger)).toEqual(["automatic", "manual"]);
    expect(afterManual.status).toBe("pending");
    // It used up no retry: the first retry comes its usual delay after the manual attempt.
    const schedule = parseSchedule(SANDBOX_SCHEDULE);
    const manualAt = Date.parse(afterManual.attempts[1]?.attempted_at ?? "");
    expect(Date.parse(afterManual.next_attempt_at ?? "")).toBe(manualAt + (schedule[0] ?? 0) * 1000);

    // The schedule then runs to its end as it would have: every retry automatic, none lost.
    await runToEnd(s, waiting.id);
    const done = await deliveryOf(s, ev.id, ep.endpoint.id);
    expect(done.status).toBe("failed");
    expect(done.attempts.map((a) => a.trigger)).toEqual(["automatic", "manual", ...schedule.map(() => "automatic")]);
    expect(s.sent.map((r) => r.headers["x-service-delivery-attempt"])).toEqual(
      done.attempts.map((a) => String(a.number)),
    );
  });

  it("redelivers to an endpoint that never had the event, and refuses a disabled one or an attempt in flight", async () => {
    let release: (r: DeliveryResult) => void = () => {};
    let hold = false;
    const s = setup(() => (hold ? new Promise<DeliveryResult>((r) => (release = r)) : ok()));
    const ev = await event(s);
    const ep = await endpoint(s, ["payment.refunded"]);
    const created = await s.deliveries.redeliver(s.caller, ev.id, ep.endpoint.id);
    expect(created).toMatchObject({ event_id: ev.id, endpoint_id: ep.endpoint.id, mode: "manual" });

    hold = true;
    const running = s.dispatcher.runOnce();
    while (s.sent.length < 1) await new Promise((r) => setImmediate(r));
    const busy = await domainError(s.deliveries.redeliver(s.caller, ev.id, ep.endpoint.id));
    expect(busy.code).toBe("conflict");
    release(ok());
    await running;

    await s.endpoints.update(s.caller, ep.endpoint.id, { disabled: true });
    const refused = await domainError(s.deliveries.redeliver(s.caller, ev.id, ep.endpoint.id));
    expect(refused).toMatchObject({ code: "invalid_state_transition", param: "endpoint_id" });
    const unknown = await domainError(s.deliveries.redeliver(s.caller, "evt_000000000000000000000000", ep.endpoint.id));
    expect(unknown).toMatchObject({ code: "not_found", param: "id" });
    const otherEnvironment = await domainError(s.deliveries.redeliver(s.t.caller(true), ev.id, ep.endpoint.id));
    expect(otherEnvironment.code).toBe("not_found");
  });

  it("recovers the failed deliveries since a time, once each", async () => {
    let up = false;
    // Creation times are strictly increasing per process (time.ts createdAt), so after earlier tests moved
    // their clocks days ahead, this one starts later still for `since` to fall between its deliveries.
    const s = setup(() => (up ? ok() : fail("connection_error")), { start: new Date("2030-01-01T00:00:00Z") });
    const ep = await endpoint(s);
    const old = await event(s);
    await s.dispatcher.runOnce();
    await runToEnd(s, (await deliveryOf(s, old.id, ep.endpoint.id)).id);
    const since = s.now().toISOString();
    const recent = [await event(s), await event(s)];
    await s.dispatcher.runOnce();
    for (const ev of recent) await runToEnd(s, (await deliveryOf(s, ev.id, ep.endpoint.id)).id);

    up = true;
    const result = await s.deliveries.recover(s.caller, ep.endpoint.id, since);
    expect(result).toMatchObject({ scheduled: 2, hasMore: false });
    await s.dispatcher.runOnce();
    for (const ev of recent) expect((await deliveryOf(s, ev.id, ep.endpoint.id)).status).toBe("succeeded");
    expect((await deliveryOf(s, old.id, ep.endpoint.id)).status).toBe("failed");
    const future = await domainError(s.deliveries.recover(s.caller, ep.endpoint.id, "2999-01-01T00:00:00Z"));
    expect(future).toMatchObject({ code: "invalid_request", param: "since" });
  });

  it("sends a test event to one endpoint only, whatever it subscribes to", async () => {
    const s = setup(() => ok());
    const a = await endpoint(s, ["payment.refunded"]);
    await endpoint(s, ["*"], "http://127.0.0.1:4242/other");
    const delivery = await s.deliveries.test(s.caller, a.endpoint.id);
    expect(delivery).toMatchObject({ event_type: "webhook_endpoint.test", status: "pending", mode: "manual" });
    await s.dispatcher.runOnce();
    expect(s.sent).toHaveLength(1);
    expect(s.sent[0]?.url).toBe(a.endpoint.url);
    expect(JSON.parse(s.sent[0]?.body ?? "")).toMatchObject({
      type: "webhook_endpoint.test",
      endpoint_id: a.endpoint.id,
      livemode: false,
    });
  });

  it("fails the pending deliveries of a deleted endpoint without sending them", async () => {
    const s = setup(() => ok(500));
    const ep = await endpoint(s);
    const ev = await event(s);
    await s.dispatcher.runOnce();
    await s.endpoints.delete(s.caller, ep.endpoint.id);
    s.advance(60);
    await s.dispatcher.runOnce();
    expect(s.sent).toHaveLength(1);
    expect(await deliveryOf(s, ev.id, ep.endpoint.id)).toMatchObject({ status: "failed", next_attempt_at: null });
  });
});

describe("secret rotation", () => {
  it("signs with the new and the old secret during the grace period, then with the new one only", async () => {
    const s = setup(() => ok());
    const { endpoint: ep, secret: old } = await endpoint(s);
    const { secret: fresh, endpoint: rotated } = await s.endpoints.rotateSecret(s.caller, ep.id, 3600);
    expect(fresh).not.toBe(old);
    expect(rotated.previous_secret_expires_at).toBe(
      new Date(s.now().getTime() + 3600_000).toISOString().replace("Z", "000Z"),
    );
    await event(s);
    await s.dispatcher.runOnce();
    const during = s.sent[0] as DeliveryRequest;
    const t1 = Math.floor(s.now().getTime() / 1000);
    expect(during.headers["x-service-signature"]).toBe(
      `t=${t1},v1=${signature(t1, during.body, fresh)},v1=${signature(t1, during.body, old)}`,
    );

    s.advance(3601);
    expect((await s.endpoints.get(s.caller, ep.id)).previous_secret_expires_at).toBeNull();
    await event(s);
    await s.dispatcher.runOnce();
    const after = s.sent[1] as DeliveryRequest;
    const t2 = Math.floor(s.now().getTime() / 1000);
    expect(after.headers["x-service-signature"]).toBe(`t=${t2},v1=${signature(t2, after.body, fresh)}`);
  });

  it("a rotation with no grace period drops the old secret at once", async () => {
    const s = setup(() => ok());
    const { endpoint: ep } = await endpoint(s);
    const { secret } = await s.endpoints.rotateSecret(s.caller, ep.id, 0);
    await event(s);
    await s.dispatcher.runOnce();
    const request = s.sent[0] as DeliveryRequest;
    const t = Math.floor(s.now().getTime() / 1000);
    expect(request.headers["x-service-signature"]).toBe(`t=${t},v1=${signature(t, request.body, secret)}`);
  });
});

describe("Standard Webhooks endpoints", () => {
  it("get the webhook-id, webhook-timestamp and webhook-signature headers instead of X-Service-Signature", async () => {
    const s = setup(() => ok());
    const { secret } = await endpoint(s, ["*"], "http://127.0.0.1:4242/hooks", "standard_webhooks");
    const ev = await event(s);
    await s.dispatcher.runOnce();
    const request = s.sent[0] as DeliveryRequest;
    const t = Math.floor(s.now().getTime() / 1000);
    expect(request.headers).toEqual({
      "content-type": "application/json",
      "user-agent": USER_AGENT,
      ...standardWebhooksHeaders(ev.id, t, request.body, [secret]),
      "x-service-event-id": ev.id,
      "x-service-delivery-id": expect.stringMatching(/^whd_[0-9A-Za-z]{24}$/),
      "x-service-delivery-attempt": "1",
    });
    expect(request.headers["webhook-id"]).toBe(ev.id);
  });

  it("switch scheme with an update, and sign with both secrets during a rotation's grace period", async () => {
    const s = setup(() => ok());
    const { endpoint: ep, secret: old } = await endpoint(s);
    const updated = await s.endpoints.update(s.caller, ep.id, { signature_scheme: "standard_webhooks" });
    expect(updated.signature_scheme).toBe("standard_webhooks");
    const { secret: fresh } = await s.endpoints.rotateSecret(s.caller, ep.id, 3600);
    const ev = await event(s);
    await s.dispatcher.runOnce();
    const request = s.sent[0] as DeliveryRequest;
    const t = Math.floor(s.now().getTime() / 1000);
    expect(request.headers["x-service-signature"]).toBeUndefined();
    expect(request.headers["webhook-signature"]).toBe(
      standardWebhooksHeaders(ev.id, t, request.body, [fresh, old])["webhook-signature"],
    );
  });
});

describe("claims across instances", () => {
  it("an instance that dies mid-attempt loses its claim when the lease ends, and the attempt is made again", async () => {
    const store = openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
    // Instance A hangs in its attempt forever (it "died"); B is healthy.
    const a = testDomain({ store, webhooks: { sender: { send: () => new Promise<DeliveryResult>(() => {}) } } });
    const b = scripted(() => ok());
    const second = testDomain({ store, vaultKeys: a.vaultKeys, webhooks: { sender: b.sender } });
    const caller: Caller = a.caller();
    const ep = await a.domain.webhooks.endpoints.create(caller, {
      url: "http://127.0.0.1:4242/",
      enabled_events: ["*"],
      signature_scheme: "x_service_signature",
    });
    a.advance(1);
    second.at(a.now());
    const ev = await store.transaction((tx) =>
      recordEvent(tx, a.domain.clock, false, "payment.captured", captured("tx_1")),
    );
    void a.domain.webhooks.dispatcher.runOnce(); // claims, then hangs
    while ((await store.findOne("webhook_deliveries", { event_id: ev.id }))?.claim == null) {
      await new Promise((r) => setImmediate(r));
    }
    await second.domain.webhooks.dispatcher.runOnce();
    expect(b.sent).toHaveLength(0); // leased to A

    second.advance((10_000 + LEASE_MARGIN_MS) / 1000 + 1);
    await second.domain.webhooks.dispatcher.runOnce();
    expect(b.sent).toHaveLength(1);
    const d = await store.findOne("webhook_deliveries", { event_id: ev.id, endpoint_id: ep.endpoint.id });
    expect(d).toMatchObject({ status: "succeeded", claim: null });
    expect(d?.attempts).toHaveLength(1);
  });

  it("two instances on one store never send the same attempt twice", async () => {
    const store = openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
    const seen = new Map<string, number>();
    const count = () =>
      scripted(async (request) => {
        const key = `${request.headers["x-service-delivery-id"]}#${request.headers["x-service-delivery-attempt"]}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, Math.random() * 3));
        return Math.random() < 0.2 ? ok(500) : ok();
      });
    const sa = count();
    const sb = count();
    const options = { concurrency: 8, endpointConcurrency: 8, sandboxSchedule: [1] };
    const a = testDomain({ store, webhooks: { sender: sa.sender, options } });
    const b = testDomain({ store, vaultKeys: a.vaultKeys, webhooks: { sender: sb.sender, options } });
    const caller = a.caller();
    for (const port of [4242, 4243]) {
      await a.domain.webhooks.endpoints.create(caller, {
        url: `http://127.0.0.1:${port}/`,
        enabled_events: ["*"],
        signature_scheme: "x_service_signature",
      });
    }
    a.advance(1);
    for (let i = 0; i < 150; i++) {
      await store.transaction((tx) => recordEvent(tx, a.domain.clock, false, "payment.captured", captured(`tx_${i}`)));
    }
    b.at(a.now());
    await Promise.all([a.domain.webhooks.dispatcher.runOnce(), b.domain.webhooks.dispatcher.runOnce()]);
    a.advance(2);
    b.at(a.now());
    await Promise.all([a.domain.webhooks.dispatcher.runOnce(), b.domain.webhooks.dispatcher.runOnce()]);

    const deliveries = await store.findAll("webhook_deliveries", {}, 10_000);
    expect(deliveries).toHaveLength(300);
    expect([...seen.values()].filter((n) => n > 1)).toEqual([]);
    const attempts = deliveries.reduce((n, d) => n + d.attempts.length, 0);
    expect(seen.size).toBe(attempts);
    expect(sa.sent.length).toBeGreaterThan(0);
    expect(sb.sent.length).toBeGreaterThan(0);
  });
});

describe("draining one environment (the sandbox clock's advance)", () => {
  it("makes every attempt due, waits for each, and counts that environment's", async () => {
    const s = setup(() => ok());
    await endpoint(s);
    await s.endpoints.create(s.t.caller(true), {
      url: "https://receiver.example/live",
      enabled_events: ["*"],
      signature_scheme: "x_service_signature",
    });
    await event(s);
    await event(s);
    await event(s, "payment.captured", true);
    // Fans out the events recorded since the last pass (of both environments: fan-out starts what it
    // claims on the way), claims what is due, and returns once the attempts ended, counting its own
    // environment's.
    expect(await s.dispatcher.drain(false)).toBe(2);
    expect(s.dispatcher.inFlight).toBe(0);
    expect(s.sent.map((r) => JSON.parse(r.body).livemode).sort()).toEqual([false, false, true]);
    expect(s.sent.filter((r) => r.url === "https://receiver.example/live")).toHaveLength(1);
    expect(await s.dispatcher.drain(true)).toBe(0);
    expect(await s.dispatcher.drain(false)).toBe(0);
    expect(s.errors).toEqual([]);
  });

  it("says when the environment's next attempt is due, and nothing once none waits", async () => {
    const s = setup((_request, n) => (n === 1 ? fail() : ok()));
    const { endpoint: sandboxEndpoint } = await endpoint(s);
    const first = await event(s);
    const second = await event(s);
    await s.dispatcher.runOnce();
    // One attempt failed (its retry 5 s later, the schedule's first step); the other succeeded, and a
    // finished delivery has no time due, which must not count as the soonest.
    const retry = await deliveryOf(s, first.id, sandboxEndpoint.id);
    expect((await deliveryOf(s, second.id, sandboxEndpoint.id)).status).toBe("succeeded");
    const now = s.domain.clock.now(false);
    expect(retry.next_attempt_at).toBe(iso(new Date(now.getTime() + 5000)));
    expect(await s.dispatcher.nextDue(false, now)).toBe(retry.next_attempt_at);
    expect(await s.dispatcher.nextDue(true, now)).toBeNull();
    expect(await s.dispatcher.nextDue(false, new Date(Date.parse(retry.next_attempt_at ?? "")))).toBeNull();
    expect(s.errors).toEqual([]);
  });
});

describe("waking", () => {
  it("a commit that records an event wakes a started dispatcher without waiting for the poll", async () => {
    const s = setup(() => ok());
    await endpoint(s);
    s.dispatcher.start(); // polls only every 60 s here
    try {
      const merchant = await s.domain.merchants.create(s.caller, { name: "Wake" });
      const token = await s.domain.tokens.create(s.caller, {
        card: "4242424242424242",
        holder: "Ada",
        exp_month: 12,
        exp_year: 2031,
      });
      s.advance(1);
      await s.domain.charges.create(s.caller, {
        merchant_id: merchant.id,
        amount: 2500,
        currency: "USD",
        payment_method: { type: "card", token: token.id },
      });
      for (let i = 0; i < 2000 && s.sent.length < 4; i++) await new Promise((r) => setTimeout(r, 1));
      expect(s.sent.map((r) => JSON.parse(r.body).type).sort()).toEqual([
        "fraud.evaluated",
        "merchant.created",
        "payment.authorized",
        "payment.captured",
      ]);
    } finally {
      await s.dispatcher.stop();
    }
  });
});

describe("when passes run", () => {
  it("a commit's wake waits MIN_PASS_GAP_MS after the last pass began, any other runs at once, and a wake during a pass makes one more", async () => {
    vi.useFakeTimers({
      toFake: ["setTimeout", "clearTimeout", "setImmediate", "setInterval", "clearInterval", "performance"],
    });
    // A pass claims each environment's due deliveries; its query for production's counts the passes, and
    // `during` wakes the dispatcher from inside a pass.
    let passes = 0;
    let during: (() => void) | null = null;
    const base = openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
    const store = new Proxy(base, {
      get(target, prop, receiver) {
        if (prop !== "findAll") return Reflect.get(target, prop, receiver);
        return (...args: Parameters<typeof base.findAll>) => {
          const [collection, where] = args as [string, { livemode?: boolean; next_attempt_at?: { $lte?: string } }];
          if (collection === "webhook_deliveries" && where.livemode === true && where.next_attempt_at?.$lte) {
            passes++;
            const wakeNow = during;
            during = null;
            wakeNow?.();
          }
          return target.findAll(...args);
        };
      },
    });
    const t = testDomain({ store, webhooks: { options: { pollIntervalMs: 60_000 } } });
    const dispatcher = t.domain.webhooks.dispatcher;
    // Moves the fake time by `ms`, letting every pass due meanwhile run to its end. ("At once" is 1 ms
    // here: the fake clock runs an immediate scheduled while it advances 1 ms later.)
    const settle = async (ms: number) => {
      await vi.advanceTimersByTimeAsync(ms);
      for (let i = 0; i < 50; i++) await vi.advanceTimersByTimeAsync(0);
    };
    try {
      dispatcher.start();
      await settle(1);
      expect(passes).toBe(1);
      // A commit's wake: 10 ms after the last pass began (MIN_PASS_GAP_MS), not before.
      dispatcher.wake(true);
      await settle(8);
      expect(passes).toBe(1);
      await settle(1);
      expect(passes).toBe(2);
      // Any other wake (an attempt ended, the poll): at once.
      dispatcher.wake();
      await settle(1);
      expect(passes).toBe(3);
      // A plain wake during a pass: exactly one more pass, at once.
      during = () => dispatcher.wake();
      dispatcher.wake();
      await settle(1);
      expect(passes).toBe(5);
      // A commit's wake during a pass: one more pass, once 10 ms have passed since that pass began.
      await settle(50);
      during = () => dispatcher.wake(true);
      dispatcher.wake();
      await settle(1);
      expect(passes).toBe(6);
      await settle(8);
      expect(passes).toBe(6);
      await settle(1);
      expect(passes).toBe(7);
      // And then none until something asks (the poll is a minute away).
      await settle(1000);
      expect(passes).toBe(7);
    } finally {
      const stopped = dispatcher.stop();
      await vi.advanceTimersByTimeAsync(100);
      await stopped;
      vi.useRealTimers();
    }
  });
});
