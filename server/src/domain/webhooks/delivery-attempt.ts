import type { Clock } from "../kernel/clock.ts";
import type { EventDoc } from "../kernel/events.ts";
import type { DomainLog } from "../kernel/log.ts";
import type { DomainObserver } from "../kernel/observer.ts";
import { iso } from "../kernel/time.ts";
import type { VaultKeys } from "../vault/crypto.ts";
import { type AttemptLog, deliveryRequest } from "./attempts.ts";
import { chaosOf, failedUnsent, sendsDuplicate } from "./chaos.ts";
import type { WebhookDeliveryDoc, WebhookEndpointDoc, WebhookStore } from "./records.ts";
import type { WebhookSender } from "./sender.ts";
import type { AddressPolicy } from "./ssrf.ts";
import { DELIVERY_MACHINE } from "./state.ts";

// One attempt of a delivery the dispatcher (./dispatcher.ts) has claimed: the request, signed
// (./attempts.ts deliveryRequest), sent within the attempt's timeout to an address the environment's
// policy allows (./ssrf.ts), then its outcome recorded on the claim (./attempts.ts attemptLog) and told
// to the observer (metrics). A delivery whose endpoint or event is gone ends failed without an attempt.

/** A claimed delivery to attempt, with its event and endpoint when the claimant has them already. */
export interface Launch {
  delivery: WebhookDeliveryDoc;
  event?: EventDoc;
  endpoint?: WebhookEndpointDoc;
}

export function deliveryAttempts(deps: {
  store: WebhookStore;
  clock: Clock;
  /** One attempt's time limit. */
  timeoutMs: number;
  sender: WebhookSender;
  vaultKeys: VaultKeys;
  policyFor: (livemode: boolean) => AddressPolicy;
  attempts: AttemptLog;
  log: DomainLog;
  observer: DomainObserver;
  /** The dispatcher instance's name, for its log lines. */
  instance: string;
}) {
  const { store, clock, sender, vaultKeys, policyFor, attempts, log, observer, instance } = deps;
  /** Attempts made, per environment (the sandbox clock's advance reports its own). */
  const made = { live: 0, sandbox: 0 };

  /** Ends a claimed delivery without an attempt (its endpoint was deleted or disabled). */
  async function abandon(d: WebhookDeliveryDoc): Promise<void> {
    const ended = await store.update(
      "webhook_deliveries",
      d.id,
      {
        set: {
          status: DELIVERY_MACHINE.step(d.status, "failed"),
          next_attempt_at: null,
          claim: null,
          updated_at: iso(clock.now(d.livemode)),
        },
      },
      { claim: d.claim },
    );
    if (ended) observer.webhookDeliveryFailed(d.livemode);
  }

  async function attempt({ delivery: d, event: givenEvent, endpoint: givenEndpoint }: Launch): Promise<void> {
    const endpoint = givenEndpoint ?? (await store.get("webhook_endpoints", d.endpoint_id));
    if (endpoint?.status !== "enabled") return abandon(d);
    const event = givenEvent ?? (await store.get("events", d.event_id));
    if (!event) return abandon(d);
    const at = clock.now(endpoint.livemode);
    // A claim this instance sat on too long (a stalled process) might outlive its lease mid-attempt;
    // leave it to be taken over rather than risk two instances sending the same attempt.
    if (d.next_attempt_at === null || Date.parse(d.next_attempt_at) - at.getTime() < deps.timeoutMs) return;
    const number = d.attempts.length + 1;
    if (endpoint.livemode) made.live++;
    else made.sandbox++;
    const request = {
      ...deliveryRequest({ event, endpoint, delivery: d, number, at: clock.real(), keys: vaultKeys }),
      timeoutMs: deps.timeoutMs,
      policy: policyFor(endpoint.livemode),
    };
    // A sandbox endpoint's chaos (./chaos.ts): its first attempts may fail unsent, and an acknowledged one
    // is sent once more, as a lost acknowledgement makes happen (the copy is not an attempt of the log).
    const chaos = chaosOf(endpoint);
    const result = failedUnsent(chaos, number) ?? (await sender.send(request));
    if (sendsDuplicate(chaos, result)) {
      const copy = await sender.send(request);
      log.debug?.(
        { delivery: d.id, attempt: number, copy: copy.kind === "response" ? copy.status : copy.error },
        "webhook chaos: duplicate sent",
      );
    }
    const { recorded, disabled, entry } = await attempts.record(d, endpoint, at, number, result);
    log.debug?.(
      {
        dispatcher: instance,
        delivery: d.id,
        event: d.event_id,
        endpoint: endpoint.id,
        attempt: number,
        status: entry.status_code,
        error: entry.error,
        latency_ms: entry.latency_ms,
        recorded,
      },
      "webhook attempt",
    );
    if (recorded) {
      const { livemode } = endpoint;
      observer.webhookAttempt({
        outcome: entry.succeeded ? "succeeded" : (entry.error ?? "http_error"),
        livemode,
        // How long the event waited for its first delivery attempt (the outbox's lag).
        lagSeconds:
          number === 1 && d.mode === "automatic"
            ? Math.max(0, at.getTime() - Date.parse(event.created_at)) / 1000
            : null,
      });
      if (!entry.succeeded && entry.next_attempt_at === null) observer.webhookDeliveryFailed(livemode);
      if (disabled) observer.webhookEndpointDisabled(entry.status_code === 410 ? "gone" : "failing", livemode);
    } else {
      // Only when this instance held the attempt past its lease and another took the delivery over.
      log.warn({ delivery: d.id, attempt: number }, "webhook attempt outlived its claim; its result was not recorded");
    }
  }

  return { attempt, made };
}
