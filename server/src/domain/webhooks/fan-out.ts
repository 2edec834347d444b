import type { Clock } from "../kernel/clock.ts";
import type { OutboxGate } from "../kernel/commit-hooks.ts";
import type { EventDoc } from "../kernel/events.ts";
import { newId } from "../kernel/ids.ts";
import { iso } from "../kernel/time.ts";
import { chaosOf, firstAttemptDue } from "./chaos.ts";
import type { Launch } from "./delivery-attempt.ts";
import type { WebhookDeliveryDoc, WebhookDocs, WebhookEndpointDoc, WebhookStore } from "./records.ts";
import { DELIVERY_MACHINE } from "./state.ts";

// Fan-out, the dispatcher's first step (./dispatcher.ts, 1.): each event written with
// `delivery_pending: true` becomes one delivery per enabled endpoint of its environment subscribed to its
// type and created before it, in one transaction that sets the flag false conditionally, so an event is
// fanned out exactly once whichever instance does it. Deliveries the instance has room for are inserted
// already claimed by it, and handed back to be started.
//
// Most events have no endpoint to go to (an integrator without webhooks, a type nobody subscribes to): the
// outbox's gate (fanOutGate below, set by ./outbox.ts) finds that out inside the transaction recording
// the event, which is then written with the flag already false. Nothing is fanned out later for it, so
// it costs no second write and no dispatcher pass (issue 36: at a steady rate each charge paid a fan-out
// transaction of its own, rewriting its events one by one). The gate reads the endpoints as the event's
// transaction sees them, where the fan-out reads them a few milliseconds after its commit: an endpoint
// whose creation commits meanwhile may miss that event, as one whose creation committed just after the
// fan-out always could. The rule (`subscribes`) is the same; only the instant it is read at moves.

/** Events fanned out per transaction. */
export const FANOUT_BATCH = 100;
/** Endpoints of one environment read per fan-out pass. */
const MAX_ENDPOINTS = 10_000;

/** Whether `endpoint` gets `event`: subscribed to its type, made before it; never a test event. */
export function subscribes(endpoint: WebhookEndpointDoc, event: EventDoc): boolean {
  if (event.type === "webhook_endpoint.test") return false;
  if (endpoint.created_at > event.created_at) return false;
  return endpoint.enabled_events.includes("*") || endpoint.enabled_events.includes(event.type);
}

/**
 * The outbox's gate (kernel/commit-hooks.ts OutboxGate): whether an enabled endpoint of the event's
 * environment subscribes to it, read through the transaction recording it. The endpoints are read once
 * per transaction and environment (a charge records several events in one), never across transactions,
 * so an endpoint another instance makes is seen by the next transaction.
 */
export function fanOutGate(): OutboxGate<WebhookDocs> {
  const read = new WeakMap<object, Map<boolean, Promise<WebhookEndpointDoc[]>>>();
  return async (reader, event) => {
    let byEnvironment = read.get(reader);
    if (byEnvironment === undefined) {
      byEnvironment = new Map();
      read.set(reader, byEnvironment);
    }
    let endpoints = byEnvironment.get(event.livemode);
    if (endpoints === undefined) {
      endpoints = reader.findAll("webhook_endpoints", { livemode: event.livemode, status: "enabled" }, MAX_ENDPOINTS);
      byEnvironment.set(event.livemode, endpoints);
    }
    for (const endpoint of await endpoints) if (subscribes(endpoint, event)) return true;
    return false;
  };
}

export interface FanOutDeps {
  /** The dispatcher's plain store. */
  store: WebhookStore;
  clock: Clock;
  /** Attempts in flight at once per endpoint. */
  endpointConcurrency: number;
  /** How long a claim made here lasts. */
  leaseMs: number;
  /** A new claim token of this instance. */
  newClaim: () => string;
}

/**
 * Fans out one batch of pending events (oldest first). `room` says, when the transaction starts (it may
 * run again on MongoDB), how many attempts may start now in all and how many run per endpoint.
 */
export async function fanOut(
  deps: FanOutDeps,
  room: () => { free: number; load: Map<string, number> },
): Promise<{ events: number; launches: Launch[] }> {
  const { store, clock } = deps;
  const events = await store.findAll("events", { delivery_pending: true }, FANOUT_BATCH, {
    by: "created_at",
    direction: "asc",
  });
  if (events.length === 0) return { events: 0, launches: [] };
  const endpoints = new Map<boolean, WebhookEndpointDoc[]>();
  for (const livemode of new Set(events.map((e) => e.livemode))) {
    endpoints.set(livemode, await store.findAll("webhook_endpoints", { livemode, status: "enabled" }, MAX_ENDPOINTS));
  }
  let launches: Launch[] = [];
  await store.transaction(async (tx) => {
    launches = []; // the transaction may run again (MongoDB)
    let { free, load } = room();
    /** Each endpoint's deliveries so far in this batch (the chaos setting `reorder` counts them). */
    const positions = new Map<string, number>();
    for (const event of events) {
      const taken = await tx.update(
        "events",
        event.id,
        { set: { delivery_pending: false } },
        { delivery_pending: true },
      );
      if (!taken) continue; // another instance fanned it out
      for (const endpoint of endpoints.get(event.livemode) ?? []) {
        if (!subscribes(endpoint, event)) continue;
        // A redelivery may have made it already; the unique index would refuse a second one anyway.
        if (await tx.findOne("webhook_deliveries", { event_id: event.id, endpoint_id: endpoint.id })) continue;
        const at = clock.now(event.livemode);
        const position = positions.get(endpoint.id) ?? 0;
        positions.set(endpoint.id, position + 1);
        // A sandbox endpoint's chaos may delay or reorder the first attempt: then it waits its turn in the queue.
        const due = firstAttemptDue(chaosOf(endpoint), at, position);
        const claimNow = due === null && free > 0 && (load.get(endpoint.id) ?? 0) < deps.endpointConcurrency;
        const stamp = clock.createdAt(event.livemode);
        const delivery: WebhookDeliveryDoc = {
          id: newId("whd"),
          livemode: event.livemode,
          created_at: stamp,
          updated_at: stamp,
          endpoint_id: endpoint.id,
          event_id: event.id,
          event_type: event.type,
          status: DELIVERY_MACHINE.start("pending"),
          mode: "automatic",
          next_attempt_at: iso(claimNow ? new Date(at.getTime() + deps.leaseMs) : (due ?? at)),
          claim: claimNow ? deps.newClaim() : null,
          attempts: [],
        };
        await tx.insert("webhook_deliveries", delivery);
        if (claimNow) {
          free--;
          load.set(endpoint.id, (load.get(endpoint.id) ?? 0) + 1);
          launches.push({ delivery, event, endpoint });
        }
      }
    }
  });
  return { events: events.length, launches };
}
