import { DuplicateKeyError, type Page, type PageResult } from "../../store/port.ts";
import type { Caller } from "../kernel/caller.ts";
import type { Clock } from "../kernel/clock.ts";
import { commit } from "../kernel/commit.ts";
import { inEnvironment } from "../kernel/environment.ts";
import { DomainError, invalid } from "../kernel/errors.ts";
import { type EventDoc, recordEvent } from "../kernel/events.ts";
import { newId } from "../kernel/ids.ts";
import type { QueryParams } from "../kernel/operations.ts";
import { iso } from "../kernel/time.ts";
import { assertEnabled, type WebhookEndpoints } from "./endpoints.ts";
import type { WebhookDeliveryDoc, WebhookEndpointDoc, WebhookStore } from "./records.ts";
import { DELIVERY_MACHINE } from "./state.ts";

// Deliveries as an integrator sees and steers them (spec/resources/webhook-endpoints.tsp and
// events.tsp): the attempt log, manual redelivery, recovery of failed deliveries and test events. These
// only create or reschedule deliveries; the dispatcher (./dispatcher.ts) sends them, woken by the outbox.

/** WebhookRecovery.has_more: at most this many failed deliveries are rescheduled per call. */
export const RECOVER_BATCH = 1000;

export function createWebhookDeliveries(deps: {
  store: WebhookStore;
  clock: Clock;
  endpoints: WebhookEndpoints;
}): WebhookDeliveries {
  const { store, clock, endpoints } = deps;
  const load = endpoints.load;

  async function loadEvent(livemode: boolean, id: string): Promise<EventDoc> {
    return inEnvironment(await store.get("events", id), livemode, "event", id);
  }

  /** A delivery due now (`at`, on the event's environment's clock), for one manual attempt. */
  function manualDelivery(event: EventDoc, endpointId: string, at: Date): WebhookDeliveryDoc {
    const stamp = clock.createdAt(event.livemode);
    return {
      id: newId("whd"),
      livemode: event.livemode,
      created_at: stamp,
      updated_at: stamp,
      endpoint_id: endpointId,
      event_id: event.id,
      event_type: event.type,
      status: DELIVERY_MACHINE.start("pending"),
      mode: "manual",
      next_attempt_at: iso(at),
      claim: null,
      attempts: [],
    };
  }

  return {
    /** POST /v1/webhook_endpoints/{id}/test: a `webhook_endpoint.test` event for this endpoint alone. */
    async test(caller: Caller, id: string): Promise<WebhookDeliveryDoc> {
      const endpoint = await load(caller.livemode, id);
      assertEnabled(endpoint, "id");
      return commit(store, caller, async (tx) => {
        const at = clock.now(endpoint.livemode);
        const event = await recordEvent(
          tx,
          clock,
          endpoint.livemode,
          "webhook_endpoint.test",
          { endpoint_id: endpoint.id },
          { deliver: false },
        );
        const delivery = manualDelivery(event, endpoint.id, at);
        await tx.insert("webhook_deliveries", delivery);
        return delivery;
      });
    },

    /** POST /v1/webhook_endpoints/{id}/recover: failed deliveries since a time get one more attempt. */
    async recover(
      caller: Caller,
      id: string,
      since: string,
    ): Promise<{ endpoint: WebhookEndpointDoc; since: string; scheduled: number; hasMore: boolean }> {
      const endpoint = await load(caller.livemode, id);
      assertEnabled(endpoint, "id");
      const at = clock.now(caller.livemode);
      const sinceDate = new Date(since);
      if (sinceDate.getTime() > at.getTime()) throw invalid("since", "must not be in the future");
      const sinceIso = iso(sinceDate);
      return commit(store, caller, async (tx) => {
        // Oldest first, so calling again (has_more) carries on where this call stopped.
        const failed = await tx.findAll(
          "webhook_deliveries",
          { endpoint_id: endpoint.id, status: "failed", created_at: { $gte: sinceIso } },
          RECOVER_BATCH + 1,
          { by: "created_at", direction: "asc" },
        );
        let scheduled = 0;
        for (const delivery of failed.slice(0, RECOVER_BATCH)) {
          const done = await tx.update(
            "webhook_deliveries",
            delivery.id,
            {
              set: {
                status: DELIVERY_MACHINE.step(delivery.status, "pending"),
                mode: "manual",
                next_attempt_at: iso(at),
                claim: null,
                updated_at: iso(at),
              },
            },
            { status: "failed" },
          );
          if (done) scheduled++;
        }
        return { endpoint, since: sinceIso, scheduled, hasMore: failed.length > RECOVER_BATCH };
      });
    },

    /**
     * POST /v1/events/{id}/redeliver: one manual attempt of the event to the endpoint, now. A delivery
     * waiting for an automatic retry is attempted now instead, logged as manual (its schedule goes on
     * if it fails); one whose attempt is running is a 409.
     */
    async redeliver(caller: Caller, eventId: string, endpointId: string): Promise<WebhookDeliveryDoc> {
      const event = await loadEvent(caller.livemode, eventId);
      const endpoint = await load(caller.livemode, endpointId, "endpoint_id");
      assertEnabled(endpoint, "endpoint_id");
      const running = () =>
        new DomainError("conflict", "An attempt of this delivery is running; retry when it has finished.", {
          param: "endpoint_id",
        });
      try {
        return await commit(store, caller, async (tx) => {
          const at = clock.now(caller.livemode);
          const existing = await tx.findOne("webhook_deliveries", { event_id: event.id, endpoint_id: endpoint.id });
          if (!existing) {
            const delivery = manualDelivery(event, endpoint.id, at);
            await tx.insert("webhook_deliveries", delivery);
            return delivery;
          }
          const leased =
            existing.claim !== null &&
            existing.next_attempt_at !== null &&
            Date.parse(existing.next_attempt_at) > at.getTime();
          if (existing.status === "pending" && leased) throw running();
          const set: Partial<WebhookDeliveryDoc> = {
            status: DELIVERY_MACHINE.step(existing.status, "pending"),
            next_attempt_at: iso(at),
            claim: null,
            updated_at: iso(at),
          };
          // A finished delivery gets one manual attempt. A pending one keeps its mode, so its retry
          // schedule goes on if this attempt fails, but the attempt itself is logged as the manual one
          // it is (WebhookAttempt.trigger) and does not use up a retry.
          if (existing.status !== "pending") set.mode = "manual";
          else set.manual_next = true;
          const updated = await tx.update(
            "webhook_deliveries",
            existing.id,
            { set },
            { status: existing.status, claim: existing.claim, updated_at: existing.updated_at },
          );
          if (!updated) throw running();
          return updated;
        });
      } catch (err) {
        // Another redelivery (or the dispatcher's fan-out) made the delivery at the same moment.
        if (err instanceof DuplicateKeyError) throw running();
        throw err;
      }
    },

    async getDelivery(caller: Caller, id: string): Promise<WebhookDeliveryDoc> {
      return inEnvironment(await store.get("webhook_deliveries", id), caller.livemode, "webhook delivery", id);
    },

    /** The attempt log of one endpoint, newest first. */
    async listDeliveries(
      caller: Caller,
      endpointId: string,
      filter: Pick<QueryParams<"listWebhookEndpointDeliveries">, "status">,
      page: Page,
    ): Promise<PageResult<WebhookDeliveryDoc>> {
      const endpoint = await load(caller.livemode, endpointId);
      return store.list(
        "webhook_deliveries",
        { livemode: caller.livemode, endpoint_id: endpoint.id, ...(filter.status ? { status: filter.status } : {}) },
        page,
      );
    },

    /** The attempt log of one event, newest first. */
    async listEventDeliveries(
      caller: Caller,
      eventId: string,
      filter: Pick<QueryParams<"listEventDeliveries">, "status">,
      page: Page,
    ): Promise<PageResult<WebhookDeliveryDoc>> {
      const event = await loadEvent(caller.livemode, eventId);
      return store.list(
        "webhook_deliveries",
        { livemode: caller.livemode, event_id: event.id, ...(filter.status ? { status: filter.status } : {}) },
        page,
      );
    },
  };
}

/** The webhook deliveries' service (spec: WebhookDelivery, redelivery). */
export interface WebhookDeliveries {
  /** POST /v1/webhook_endpoints/{id}/test: a `webhook_endpoint.test` event for this endpoint alone. */
  test(caller: Caller, id: string): Promise<WebhookDeliveryDoc>;
  /** POST /v1/webhook_endpoints/{id}/recover: failed deliveries since a time get one more attempt. */
  recover(
    caller: Caller,
    id: string,
    since: string,
  ): Promise<{
    endpoint: WebhookEndpointDoc;
    since: string;
    scheduled: number;
    hasMore: boolean;
  }>;
  /**
   * POST /v1/events/{id}/redeliver: one manual attempt of the event to the endpoint, now. A delivery
   * waiting for an automatic retry is attempted now instead, logged as manual (its schedule goes on
   * if it fails); one whose attempt is running is a 409.
   */
  redeliver(caller: Caller, eventId: string, endpointId: string): Promise<WebhookDeliveryDoc>;
  getDelivery(caller: Caller, id: string): Promise<WebhookDeliveryDoc>;
  /** The attempt log of one endpoint, newest first. */
  listDeliveries(
    caller: Caller,
    endpointId: string,
    filter: Pick<QueryParams<"listWebhookEndpointDeliveries">, "status">,
    page: Page,
  ): Promise<PageResult<WebhookDeliveryDoc>>;
  /** The attempt log of one event, newest first. */
  listEventDeliveries(
    caller: Caller,
    eventId: string,
    filter: Pick<QueryParams<"listEventDeliveries">, "status">,
    page: Page,
  ): Promise<PageResult<WebhookDeliveryDoc>>;
}
