import type { Clock } from "../kernel/clock.ts";
import { type EventDoc, eventObject, recordEvent } from "../kernel/events.ts";
import { maskSensitive } from "../kernel/mask.ts";
import { iso } from "../kernel/time.ts";
import type { VaultKeys } from "../vault/crypto.ts";
import { signingSecrets } from "./endpoints.ts";
import type {
  WebhookAttemptRecord,
  WebhookDeliveryDoc,
  WebhookEndpointDoc,
  WebhookStore,
  WebhookTx,
} from "./records.ts";
import { retryDelayMs } from "./schedule.ts";
import type { DeliveryResult } from "./sender.ts";
import { signatureHeader, signatureScheme, standardWebhooksHeaders } from "./signing.ts";
import { DELIVERY_MACHINE, ENDPOINT_MACHINE } from "./state.ts";

// One delivery attempt, as the dispatcher (./dispatcher.ts) makes it: the request a receiver gets (the
// contract's WebhookDeliveryHeaders), and what its outcome does to the delivery (the attempt log, the
// retry schedule) and to the endpoint (failing_since, auto-disable after 410 or a failure window).

export const USER_AGENT = "PaymentsWebhooks/1.0";

/**
 * The body and headers of one attempt: the event as the API shows it, signed with the endpoint's secrets
 * in the endpoint's scheme (./signing.ts). `at` is the server's own time, never a sandbox clock's: the
 * receiver checks the signed timestamp against its clock.
 */
export function deliveryRequest(a: {
  event: EventDoc;
  endpoint: WebhookEndpointDoc;
  delivery: WebhookDeliveryDoc;
  number: number;
  at: Date;
  keys: VaultKeys;
}): { url: string; headers: Record<string, string>; body: string } {
  const body = JSON.stringify(eventObject(a.event));
  const timestamp = Math.floor(a.at.getTime() / 1000);
  const secrets = signingSecrets(a.endpoint, a.at, a.keys);
  const signed =
    signatureScheme(a.endpoint) === "standard_webhooks"
      ? standardWebhooksHeaders(a.event.id, timestamp, body, secrets)
      : { "x-service-signature": signatureHeader(timestamp, body, secrets) };
  const headers = {
    "content-type": "application/json",
    "user-agent": USER_AGENT,
    ...signed,
    "x-service-event-id": a.event.id,
    "x-service-delivery-id": a.delivery.id,
    "x-service-delivery-attempt": String(a.number),
  };
  return { url: a.endpoint.url, headers, body };
}

/** The settings an attempt's outcome follows (part of WebhookSettings, dispatcher.ts). */
export interface AttemptSettings {
  /** Delays before each automatic retry, in seconds, production and sandbox. */
  liveSchedule: readonly number[];
  sandboxSchedule: readonly number[];
  /** An endpoint failing every attempt for this long is disabled; 0: never. */
  disableAfterMs: number;
}

export function attemptLog(deps: {
  store: WebhookStore;
  clock: Clock;
  settings: AttemptSettings;
  /** [0, 1): AttemptLog, for the retry jitter. */
  random: () => number;
}) {
  const { store, clock, settings, random } = deps;
  const schedule = (livemode: boolean) => (livemode ? settings.liveSchedule : settings.sandboxSchedule);

  /**
   * Writes an attempt's outcome, with the endpoint's health (failing_since, auto-disable), in one
   * transaction conditional on still holding the claim. `recorded` is false when another instance took
   * the delivery over (this one held it past its lease); `disabled`, when this failure disabled the endpoint.
   */
  async function record(
    d: WebhookDeliveryDoc,
    endpoint: WebhookEndpointDoc,
    at: Date,
    number: number,
    result: DeliveryResult,
  ): Promise<{ recorded: boolean; disabled: boolean; entry: WebhookAttemptRecord }> {
    const ok = result.kind === "response" && result.status >= 200 && result.status < 300;
    const gone = result.kind === "response" && result.status === 410;
    const finished = clock.now(d.livemode);
    let next: string | null = null;
    const manual = d.mode === "manual" || d.manual_next === true;
    if (!ok && !gone && d.mode === "automatic") {
      // The automatic attempts made so far, this one included: a manual attempt asked for while the
      // schedule runs uses up no retry, so the retry it stood in for comes after its usual delay.
      const made = Math.max(1, d.attempts.filter((a) => a.trigger === "automatic").length + (manual ? 0 : 1));
      const delay = retryDelayMs(schedule(endpoint.livemode), made, random);
      if (delay !== null) next = iso(new Date(finished.getTime() + delay));
    }
    const entry: WebhookAttemptRecord = {
      number,
      // WebhookAttempt.trigger (spec/resources/webhook-endpoints.tsp): `manual` for every attempt a
      // redelivery, a recovery or a test asked for, scheduled retries being `automatic`.
      trigger: manual ? "manual" : "automatic",
      attempted_at: iso(at),
      status_code: result.kind === "response" ? result.status : null,
      error: result.kind === "error" ? result.error : null,
      error_message: result.kind === "error" ? maskSensitive(result.message) : null,
      latency_ms: Math.max(0, Math.round(result.latencyMs)),
      response_body: result.kind === "response" ? maskSensitive(result.body) : null,
      succeeded: ok,
      next_attempt_at: next,
    };
    let disabled = false;
    const recorded = await store.transaction(async (tx) => {
      disabled = false;
      const updated = await tx.update(
        "webhook_deliveries",
        d.id,
        {
          set: {
            status: DELIVERY_MACHINE.step(d.status, ok ? "succeeded" : next ? "pending" : "failed"),
            next_attempt_at: next,
            manual_next: false,
            claim: null,
            attempts: [...d.attempts, entry],
            updated_at: iso(finished),
          },
        },
        { claim: d.claim },
      );
      if (!updated) return false;
      if (ok) {
        await tx.update(
          "webhook_endpoints",
          endpoint.id,
          { set: { failing_since: null } },
          { failing_since: { $ne: null } },
        );
      } else {
        disabled = await noteFailure(tx, endpoint.id, gone, at);
      }
      return true;
    });
    return { recorded, disabled, entry };
  }

  /** The endpoint's health after a failed attempt. Returns true when this disabled it. */
  async function noteFailure(tx: WebhookTx, endpointId: string, gone: boolean, at: Date): Promise<boolean> {
    const endpoint = await tx.get("webhook_endpoints", endpointId);
    if (endpoint?.status !== "enabled") return false;
    if (gone) return disable(tx, endpoint, "gone");
    if (endpoint.failing_since === null) {
      await tx.update("webhook_endpoints", endpointId, { set: { failing_since: iso(at) } }, { failing_since: null });
      return false;
    }
    if (settings.disableAfterMs > 0 && at.getTime() - Date.parse(endpoint.failing_since) >= settings.disableAfterMs) {
      return disable(tx, endpoint, "failing");
    }
    return false;
  }

  async function disable(tx: WebhookTx, endpoint: WebhookEndpointDoc, reason: "gone" | "failing"): Promise<boolean> {
    const done = await tx.update(
      "webhook_endpoints",
      endpoint.id,
      {
        set: {
          status: ENDPOINT_MACHINE.step(endpoint.status, "disabled"),
          disabled_reason: reason,
          updated_at: iso(clock.now(endpoint.livemode)),
        },
      },
      { status: "enabled" },
    );
    if (!done) return false;
    await recordEvent(tx, clock, endpoint.livemode, "webhook_endpoint.disabled", {
      endpoint_id: endpoint.id,
      url: endpoint.url,
      reason,
      failing_since: reason === "failing" ? endpoint.failing_since : null,
    });
    return true;
  }

  return { record };
}
/** The webhooks area's attempt log: each delivery attempt's outcome and the endpoint's health. */
export interface AttemptLog {
  record: (
    d: WebhookDeliveryDoc,
    endpoint: WebhookEndpointDoc,
    at: Date,
    number: number,
    result: DeliveryResult,
  ) => Promise<{
    recorded: boolean;
    disabled: boolean;
    entry: WebhookAttemptRecord;
  }>;
}
