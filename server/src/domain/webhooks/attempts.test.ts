import { describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import { eventObject, recordEvent } from "../kernel/events.ts";
import { newId } from "../kernel/ids.ts";
import { iso } from "../kernel/time.ts";
import { attemptLog, deliveryRequest, USER_AGENT } from "./attempts.ts";
import type { WebhookSettings } from "./dispatcher.ts";
import type { WebhookAttemptRecord, WebhookDeliveryDoc } from "./records.ts";
import type { DeliveryResult } from "./sender.ts";
import { signature } from "./signing.ts";
import { DELIVERY_MACHINE } from "./state.ts";

// One delivery attempt (./attempts.ts): the request a receiver gets (the contract's
// WebhookDeliveryHeaders in spec/webhooks.tsp), and what its outcome does to the delivery (success,
// retry on the schedule, failure) and to its endpoint's health (failing_since, disabled after 410 or
// after the failure window), written only while the attempt still holds its claim.

const SCHEDULE = [5, 30, 120];
const WINDOW_MS = 3600_000;

const response = (status: number, body = ""): DeliveryResult => ({ kind: "response", status, body, latencyMs: 7.6 });
const error = (code: "timeout" | "connection_error"): DeliveryResult => ({
  kind: "error",
  error: code,
  message: `${code} talking to 4242424242424242`,
  latencyMs: 10_000,
});

function setup(disableAfterMs = WINDOW_MS) {
  const t = testDomain({ start: new Date("2026-12-01T00:00:00Z") });
  const settings: WebhookSettings = {
    timeoutMs: 10_000,
    liveSchedule: [60],
    sandboxSchedule: SCHEDULE,
    disableAfterMs,
    concurrency: 5,
    endpointConcurrency: 5,
    pollIntervalMs: 1000,
  };
  const log = attemptLog({ store: t.store, clock: t.domain.clock, settings, random: () => 0.5 });
  const endpoint = async () => {
    const { endpoint: ep } = await t.domain.webhooks.endpoints.create(t.caller(), {
      url: "http://127.0.0.1:4242/hooks",
      enabled_events: ["*"],
      signature_scheme: "x_service_signature",
    });
    return ep;
  };
  /** A claimed delivery of a fresh event to `endpointId`, with `attempts` already made. */
  const delivery = async (
    endpointId: string,
    options: { mode?: "automatic" | "manual"; attempts?: WebhookAttemptRecord[] } = {},
  ): Promise<WebhookDeliveryDoc> => {
    const event = await t.store.transaction((tx) =>
      recordEvent(tx, t.domain.clock, false, "payment.captured", { tx_id: "tx_1" } as never, { deliver: false }),
    );
    const at = iso(t.now());
    const doc: WebhookDeliveryDoc = {
      id: newId("whd"),
      livemode: false,
      created_at: at,
      updated_at: at,
      endpoint_id: endpointId,
      event_id: event.id,
      event_type: event.type,
      status: DELIVERY_MACHINE.start("pending"),
      mode: options.mode ?? "automatic",
      next_attempt_at: iso(new Date(t.now().getTime() + 15_000)),
      claim: "Instance1234:1",
      attempts: options.attempts ?? [],
    };
    await t.store.insert("webhook_deliveries", doc);
    return doc;
  };
  const stored = async (id: string) => t.store.get("webhook_deliveries", id);
  const endpointNow = async (id: string) => t.store.get("webhook_endpoints", id);
  return { ...t, log, endpoint, delivery, stored, endpointNow };
}

const past = (trigger: "automatic" | "manual"): WebhookAttemptRecord => ({
  number: 1,
  trigger,
  attempted_at: "2026-11-30T00:00:00.000000Z",
  status_code: 500,
  error: null,
  error_message: null,
  latency_ms: 1,
  response_body: "",
  succeeded: false,
  next_attempt_at: null,
});

describe("the request a receiver gets", () => {
  it("is the event as the API shows it, signed over the exact body, with the delivery's ids", async () => {
    const s = setup();
    const ep = await s.endpoint();
    const d = await s.delivery(ep.id);
    const event = await s.store.get("events", d.event_id);
    const endpointDoc = await s.endpointNow(ep.id);
    if (!event || !endpointDoc) throw new Error("missing");
    const at = new Date("2026-12-01T00:00:10.900Z");
    const request = deliveryRequest({ event, endpoint: endpointDoc, delivery: d, number: 3, at, keys: s.vaultKeys });
    expect(USER_AGENT).toBe("PaymentsWebhooks/1.0");
    const body = JSON.stringify(eventObject(event));
    expect(request.url).toBe("http://127.0.0.1:4242/hooks");
    expect(request.body).toBe(body);
    const secret = (await s.domain.webhooks.endpoints.rotateSecret(s.caller(), ep.id, 0)).secret;
    const rotated = await s.endpointNow(ep.id);
    const fresh = deliveryRequest({ event, endpoint: rotated as never, delivery: d, number: 3, at, keys: s.vaultKeys });
    const t = Math.floor(at.getTime() / 1000);
    expect(fresh.headers).toEqual({
      "content-type": "application/json",
      "user-agent": "PaymentsWebhooks/1.0",
      "x-service-signature": `t=${t},v1=${signature(t, body, secret)}`,
      "x-service-event-id": event.id,
      "x-service-delivery-id": d.id,
      "x-service-delivery-attempt": "3",
    });
  });

  it("carries two signatures while a rotated-out secret is in its grace period, then one", async () => {
    const s = setup();
    const ep = await s.endpoint();
    const created = await s.domain.webhooks.endpoints.create(s.caller(), {
      url: "http://127.0.0.1:4243/",
      enabled_events: ["*"],
      signature_scheme: "x_service_signature",
    });
    const old = created.secret;
    const { secret: fresh } = await s.domain.webhooks.endpoints.rotateSecret(s.caller(), created.endpoint.id, 60);
    const d = await s.delivery(ep.id);
    const event = await s.store.get("events", d.event_id);
    const doc = await s.endpointNow(created.endpoint.id);
    if (!event || !doc) throw new Error("missing");
    const body = JSON.stringify(eventObject(event));
    const sign = (at: Date) =>
      deliveryRequest({ event, endpoint: doc, delivery: d, number: 1, at, keys: s.vaultKeys }).headers[
        "x-service-signature"
      ];
    const during = new Date(s.now().getTime() + 59_999);
    const t1 = Math.floor(during.getTime() / 1000);
    expect(sign(during)).toBe(`t=${t1},v1=${signature(t1, body, fresh)},v1=${signature(t1, body, old)}`);
    const after = new Date(s.now().getTime() + 60_000);
    const t2 = Math.floor(after.getTime() / 1000);
    expect(sign(after)).toBe(`t=${t2},v1=${signature(t2, body, fresh)}`);
  });
});

describe("what an outcome does to the delivery", () => {
  it("a 2xx succeeds: no retry, the claim released, the endpoint's failure streak cleared", async () => {
    for (const status of [200, 204, 299]) {
      const s = setup();
      const ep = await s.endpoint();
      await s.store.update("webhook_endpoints", ep.id, { set: { failing_since: iso(s.now()) } });
      const d = await s.delivery(ep.id);
      const at = s.now();
      s.advance(1);
      const outcome = await s.log.record(d, ep, at, 1, response(status, "thanks"));
      expect(outcome).toEqual({
        recorded: true,
        disabled: false,
        entry: {
          number: 1,
          trigger: "automatic",
          attempted_at: iso(at),
          status_code: status,
          error: null,
          error_message: null,
          latency_ms: 8,
          response_body: "thanks",
          succeeded: true,
          next_attempt_at: null,
        },
      });
      expect(await s.stored(d.id)).toMatchObject({
        status: "succeeded",
        next_attempt_at: null,
        claim: null,
        attempts: [outcome.entry],
        updated_at: iso(s.now()),
      });
      expect((await s.endpointNow(ep.id))?.failing_since).toBeNull();
    }
  });

  it("anything else is a failure retried on the schedule, counted from when the attempt finished", async () => {
    for (const result of [
      response(199),
      response(300),
      response(302),
      response(404),
      response(500),
      error("timeout"),
    ]) {
      const s = setup();
      const ep = await s.endpoint();
      const d = await s.delivery(ep.id);
      const at = s.now();
      s.advance(2); // the attempt took two seconds
      const { entry, recorded, disabled } = await s.log.record(d, ep, at, 1, result);
      expect({ recorded, disabled, succeeded: entry.succeeded }).toEqual({
        recorded: true,
        disabled: false,
        succeeded: false,
      });
      const retry = iso(new Date(s.now().getTime() + (SCHEDULE[0] as number) * 1000));
      expect(entry.next_attempt_at).toBe(retry);
      expect(await s.stored(d.id)).toMatchObject({ status: "pending", next_attempt_at: retry, claim: null });
    }
  });

  it("keeps a failed attempt's error and body masked", async () => {
    const s = setup();
    const ep = await s.endpoint();
    const d = await s.delivery(ep.id);
    const { entry } = await s.log.record(d, ep, s.now(), 1, error("connection_error"));
    expect(entry).toMatchObject({
      status_code: null,
      error: "connection_error",
      error_message: "connection_error talking to 4242********4242",
      response_body: null,
      latency_ms: 10_000,
    });
    const bad = await s.delivery(ep.id);
    const { entry: answered } = await s.log.record(bad, ep, s.now(), 1, response(400, "card 4242424242424242"));
    expect(answered.response_body).toBe("card 4242********4242");
  });

  it("counts only automatic attempts toward the schedule, and fails once it runs out", async () => {
    const s = setup();
    const ep = await s.endpoint();
    // One automatic attempt and one manual redelivery made so far: the next delay is the schedule's second.
    const d = await s.delivery(ep.id, { attempts: [past("automatic"), past("manual")] });
    const { entry } = await s.log.record(d, ep, s.now(), 3, response(500));
    expect(entry.next_attempt_at).toBe(iso(new Date(s.now().getTime() + (SCHEDULE[1] as number) * 1000)));
    const spent = await s.delivery(ep.id, { attempts: SCHEDULE.map(() => past("automatic")) });
    const last = await s.log.record(spent, ep, s.now(), 4, response(500));
    expect(last.entry.next_attempt_at).toBeNull();
    expect(await s.stored(spent.id)).toMatchObject({ status: "failed", next_attempt_at: null, claim: null });
  });

  it("never retries a manual attempt", async () => {
    const s = setup();
    const ep = await s.endpoint();
    const d = await s.delivery(ep.id, { mode: "manual" });
    const { entry } = await s.log.record(d, ep, s.now(), 1, response(503));
    expect(entry).toMatchObject({ trigger: "manual", next_attempt_at: null });
    expect((await s.stored(d.id))?.status).toBe("failed");
  });

  it("writes nothing once another instance took the delivery over", async () => {
    const s = setup();
    const ep = await s.endpoint();
    const d = await s.delivery(ep.id);
    await s.store.update("webhook_deliveries", d.id, { set: { claim: "OtherInstanc:7" } });
    const outcome = await s.log.record(d, ep, s.now(), 1, response(410));
    expect(outcome).toMatchObject({ recorded: false, disabled: false });
    expect(await s.stored(d.id)).toMatchObject({ status: "pending", claim: "OtherInstanc:7", attempts: [] });
    expect(await s.endpointNow(ep.id)).toMatchObject({ status: "enabled", failing_since: null });
  });
});

describe("what an outcome does to the endpoint", () => {
  it("the first failure starts its failure streak; later ones keep its start", async () => {
    const s = setup();
    const ep = await s.endpoint();
    const first = s.now();
    expect((await s.log.record(await s.delivery(ep.id), ep, first, 1, response(500))).disabled).toBe(false);
    expect((await s.endpointNow(ep.id))?.failing_since).toBe(iso(first));
    s.advance(60);
    expect((await s.log.record(await s.delivery(ep.id), ep, s.now(), 1, response(500))).disabled).toBe(false);
    expect((await s.endpointNow(ep.id))?.failing_since).toBe(iso(first));
  });

  it("a 410 disables it at once, with an event, and ends the delivery without a retry", async () => {
    const s = setup();
    const ep = await s.endpoint();
    // It had been failing: the event still says failing_since null, as the reason is 410, not the streak.
    await s.log.record(await s.delivery(ep.id), ep, s.now(), 1, response(500));
    s.advance(5);
    const d = await s.delivery(ep.id);
    const outcome = await s.log.record(d, ep, s.now(), 1, response(410, "gone"));
    expect(outcome).toMatchObject({ recorded: true, disabled: true, entry: { next_attempt_at: null } });
    expect((await s.stored(d.id))?.status).toBe("failed");
    expect(await s.endpointNow(ep.id)).toMatchObject({
      status: "disabled",
      disabled_reason: "gone",
      updated_at: iso(s.now()),
    });
    const events = await s.store.findAll("events", { type: "webhook_endpoint.disabled" });
    expect(events.map((e) => e.payload)).toEqual([
      { endpoint_id: ep.id, url: ep.url, reason: "gone", failing_since: null },
    ]);
    expect(events[0]?.delivery_pending).toBe(true);
  });

  it("disables it once it has failed for the whole window, not a millisecond before", async () => {
    const s = setup();
    const ep = await s.endpoint();
    const start = s.now();
    await s.log.record(await s.delivery(ep.id), ep, start, 1, response(500));
    const almost = new Date(start.getTime() + WINDOW_MS - 1);
    expect((await s.log.record(await s.delivery(ep.id), ep, almost, 1, response(500))).disabled).toBe(false);
    expect((await s.endpointNow(ep.id))?.status).toBe("enabled");
    const full = new Date(start.getTime() + WINDOW_MS);
    expect((await s.log.record(await s.delivery(ep.id), ep, full, 1, error("timeout"))).disabled).toBe(true);
    expect(await s.endpointNow(ep.id)).toMatchObject({ status: "disabled", disabled_reason: "failing" });
    const [disabled] = await s.store.findAll("events", { type: "webhook_endpoint.disabled" });
    expect(disabled?.payload).toEqual({
      endpoint_id: ep.id,
      url: ep.url,
      reason: "failing",
      failing_since: iso(start),
    });
  });

  it("never disables for the streak when the window is 0", async () => {
    const s = setup(0);
    const ep = await s.endpoint();
    const start = s.now();
    await s.log.record(await s.delivery(ep.id), ep, start, 1, response(500));
    const later = new Date(start.getTime() + 365 * 86_400_000);
    expect((await s.log.record(await s.delivery(ep.id), ep, later, 1, response(500))).disabled).toBe(false);
    expect((await s.endpointNow(ep.id))?.status).toBe("enabled");
  });

  it("leaves a disabled or deleted endpoint as it is", async () => {
    const s = setup();
    const ep = await s.endpoint();
    await s.domain.webhooks.endpoints.update(s.caller(), ep.id, { disabled: true });
    const outcome = await s.log.record(await s.delivery(ep.id), ep, s.now(), 1, response(410));
    expect(outcome).toMatchObject({ recorded: true, disabled: false });
    expect(await s.endpointNow(ep.id)).toMatchObject({ disabled_reason: "requested", failing_since: null });
    expect(await s.store.findAll("events", { type: "webhook_endpoint.disabled" })).toEqual([]);

    const gone = await s.endpoint();
    const d = await s.delivery(gone.id);
    await s.store.delete("webhook_endpoints", gone.id);
    expect(await s.log.record(d, gone, s.now(), 1, response(500))).toMatchObject({ recorded: true, disabled: false });
  });
});
