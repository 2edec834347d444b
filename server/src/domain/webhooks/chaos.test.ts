import { describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import { DomainError } from "../kernel/errors.ts";
import { type EventPayload, recordEvent } from "../kernel/events.ts";
import type { WebhookChaos } from "./chaos.ts";
import { chaosSettings, failedUnsent, firstAttemptDue, sendsDuplicate } from "./chaos.ts";
import { parseSchedule } from "./schedule.ts";
import type { DeliveryRequest, DeliveryResult, WebhookSender } from "./sender.ts";

// Webhook chaos (./chaos.ts; the contract's WebhookChaos): the settings' rules, then the dispatcher
// applying them with a scripted sender and a clock the test moves.

const ok: DeliveryResult = { kind: "response", status: 200, body: "ok", latencyMs: 3 };
const chaos = (c: Partial<WebhookChaos>): WebhookChaos => ({
  duplicate: false,
  delay_seconds: 0,
  reorder: false,
  fail_first_attempts: 0,
  ...c,
});

describe("chaosSettings", () => {
  it("fills absent fields with the contract's defaults, stores settings that change nothing as null", () => {
    expect(chaosSettings(false, { duplicate: true })).toEqual(chaos({ duplicate: true }));
    expect(chaosSettings(false, { fail_first_attempts: 2, delay_seconds: 30 })).toEqual(
      chaos({ fail_first_attempts: 2, delay_seconds: 30 }),
    );
    expect(chaosSettings(false, {})).toBeNull();
    expect(chaosSettings(false, { duplicate: false, reorder: false })).toBeNull();
    expect(chaosSettings(false, null)).toBeNull();
    expect(chaosSettings(false, undefined)).toBeUndefined();
  });

  it("refuses any setting for a production endpoint, naming chaos; null and absence are fine", () => {
    let err: unknown;
    try {
      chaosSettings(true, { duplicate: true });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: "invalid_request", param: "chaos" });
    expect(() => chaosSettings(true, {})).toThrow(DomainError);
    expect(chaosSettings(true, null)).toBeNull();
    expect(chaosSettings(true, undefined)).toBeUndefined();
  });
});

describe("the rules an attempt follows", () => {
  const at = new Date("2026-11-27T12:00:00Z");
  it("firstAttemptDue: at once without delay or reorder; delayed; newest first under reorder", () => {
    expect(firstAttemptDue(null, at, 0)).toBeNull();
    expect(firstAttemptDue(chaos({ duplicate: true }), at, 3)).toBeNull();
    expect(firstAttemptDue(chaos({ delay_seconds: 30 }), at, 5)?.toISOString()).toBe("2026-11-27T12:00:30.000Z");
    const [first, second] = [0, 1].map((p) => firstAttemptDue(chaos({ reorder: true }), at, p)?.getTime() ?? 0);
    expect(second).toBeLessThan(first as number);
  });

  it("failedUnsent: exactly the first N attempts", () => {
    const c = chaos({ fail_first_attempts: 2 });
    expect(failedUnsent(c, 1)).toMatchObject({ kind: "error", error: "connection_error" });
    expect(failedUnsent(c, 2)).not.toBeNull();
    expect(failedUnsent(c, 3)).toBeNull();
    expect(failedUnsent(null, 1)).toBeNull();
  });

  it("sendsDuplicate: only an acknowledged attempt", () => {
    const c = chaos({ duplicate: true });
    expect(sendsDuplicate(c, ok)).toBe(true);
    expect(sendsDuplicate(c, { ...ok, status: 299 })).toBe(true);
    expect(sendsDuplicate(c, { ...ok, status: 300 })).toBe(false);
    expect(sendsDuplicate(c, { ...ok, status: 500 })).toBe(false);
    expect(sendsDuplicate(c, { kind: "error", error: "timeout", message: "", latencyMs: 1 })).toBe(false);
    expect(sendsDuplicate(chaos({}), ok)).toBe(false);
  });
});

describe("the dispatcher with a chaotic endpoint", () => {
  function setup() {
    const sent: DeliveryRequest[] = [];
    const sender: WebhookSender = {
      send: async (request) => {
        sent.push(request);
        return ok;
      },
    };
    const t = testDomain({
      webhooks: {
        sender,
        random: () => 0.5, // no jitter: the schedule exactly
        options: {
          sandboxSchedule: parseSchedule("5,30,120"),
          liveSchedule: parseSchedule("60,300"),
          disableAfterMs: 5 * 86400 * 1000,
          pollIntervalMs: 60_000,
        },
      },
    });
    const { endpoints, dispatcher } = t.domain.webhooks;
    const caller = t.caller();
    const endpointWith = (c: Partial<WebhookChaos>) =>
      endpoints.create(caller, {
        url: "http://127.0.0.1:4242/hooks",
        enabled_events: ["*"],
        signature_scheme: "x_service_signature",
        chaos: c,
      });
    const payload = (tx_id: string): EventPayload<"payment.captured"> => ({
      tx_id,
      merchant_id: "mch_9Lm2QwErTy7UiOp3AsDf5GhJ",
      amount: 2500,
      currency: "USD",
      status: "captured",
      payment_method_type: "card",
      amount_captured: 2500,
    });
    /** Events made together, in one transaction (as one request makes them), oldest first. */
    const events = async (n: number) => {
      t.advance(1);
      return t.store.transaction(async (tx) => {
        const made = [];
        for (let i = 0; i < n; i++) {
          made.push(await recordEvent(tx, t.domain.clock, false, "payment.captured", payload(`tx_${i}`)));
        }
        return made;
      });
    };
    const eventIds = () => sent.map((r) => r.headers["x-service-event-id"]);
    return { ...t, sent, endpoints, dispatcher, caller, endpointWith, events, eventIds };
  }

  it("duplicate: an acknowledged delivery reaches the receiver twice, the same bytes; the log has one attempt", async () => {
    const s = setup();
    await s.endpointWith({ duplicate: true });
    const [e] = await s.events(1);
    await s.dispatcher.runOnce();
    expect(s.eventIds()).toEqual([e?.id, e?.id]);
    expect(s.sent[1]?.body).toBe(s.sent[0]?.body);
    expect(s.sent[1]?.headers["x-service-signature"]).toBe(s.sent[0]?.headers["x-service-signature"]);
    const d = await s.store.findOne("webhook_deliveries", { event_id: e?.id ?? "" });
    expect(d?.status).toBe("succeeded");
    expect(d?.attempts).toHaveLength(1);
  });

  it("delay_seconds: the first attempt waits on the sandbox clock", async () => {
    const s = setup();
    await s.endpointWith({ delay_seconds: 30 });
    const [e] = await s.events(1);
    await s.dispatcher.runOnce();
    expect(s.sent).toHaveLength(0);
    s.advance(29);
    await s.dispatcher.runOnce();
    expect(s.sent).toHaveLength(0);
    s.advance(1);
    await s.dispatcher.runOnce();
    expect(s.eventIds()).toEqual([e?.id]);
  });

  it("reorder: events made together reach the receiver newest first", async () => {
    const s = setup();
    await s.endpointWith({ reorder: true });
    const made = await s.events(3);
    await s.dispatcher.runOnce();
    expect(s.eventIds()).toEqual(made.map((e) => e.id).reverse());
  });

  it("without chaos, the same events go oldest first (what reorder changes)", async () => {
    const s = setup();
    await s.endpointWith({});
    const made = await s.events(3);
    await s.dispatcher.runOnce();
    expect(s.eventIds()).toEqual(made.map((e) => e.id));
  });

  it("fail_first_attempts: the first N attempts fail unsent and are logged so; the retry schedule brings the next", async () => {
    const s = setup();
    await s.endpointWith({ fail_first_attempts: 2 });
    const [e] = await s.events(1);
    await s.dispatcher.runOnce();
    expect(s.sent).toHaveLength(0);
    let d = await s.store.findOne("webhook_deliveries", { event_id: e?.id ?? "" });
    expect(d?.attempts[0]).toMatchObject({ succeeded: false, error: "connection_error", status_code: null });
    expect(d?.attempts[0]?.error_message).toContain("fail_first_attempts");
    s.advance(5);
    await s.dispatcher.runOnce();
    expect(s.sent).toHaveLength(0);
    s.advance(30);
    await s.dispatcher.runOnce();
    expect(s.eventIds()).toEqual([e?.id]);
    expect(s.sent[0]?.headers["x-service-delivery-attempt"]).toBe("3");
    d = await s.store.findOne("webhook_deliveries", { event_id: e?.id ?? "" });
    expect(d?.status).toBe("succeeded");
    expect(d?.attempts.map((a) => a.succeeded)).toEqual([false, false, true]);
  });

  it("an update replaces the settings, and null turns them off", async () => {
    const s = setup();
    const { endpoint } = await s.endpointWith({ duplicate: true, delay_seconds: 10 });
    expect(endpoint.chaos).toEqual(chaos({ duplicate: true, delay_seconds: 10 }));
    const updated = await s.endpoints.update(s.caller, endpoint.id, { chaos: { reorder: true } });
    expect(updated.chaos).toEqual(chaos({ reorder: true }));
    expect((await s.endpoints.update(s.caller, endpoint.id, { description: "kept" })).chaos).toEqual(
      chaos({ reorder: true }),
    );
    expect((await s.endpoints.update(s.caller, endpoint.id, { chaos: null })).chaos).toBeNull();
  });
});
