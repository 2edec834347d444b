import type { Page } from "../../store/port.ts";
import type { AppStore, AppTx, EventDoc } from "../records.ts";
import type { Caller, Now } from "./caller.ts";
import { notFound } from "./errors.ts";
import { newId } from "./ids.ts";
import { createdAt } from "./time.ts";

// An event is written through the same transaction handle as the change that causes it, and is
// marked `delivery_pending` there: it is its own outbox entry, so the webhook dispatcher
// (webhooks/dispatcher.ts) can never miss or invent a change, whatever crashes.

export function recordEvent(
  tx: AppTx,
  now: Now,
  livemode: boolean,
  type: string,
  payload: Record<string, unknown>,
  options: { deliver?: boolean } = {},
): Promise<EventDoc> {
  const event: EventDoc = {
    id: newId("evt"),
    livemode,
    created_at: createdAt(now()),
    type,
    payload,
    delivery_pending: options.deliver ?? true,
  };
  return tx.insert("events", event).then(() => event);
}

/**
 * The event as the API shows it (the contract's Event): flat, the envelope first, then the type's own
 * fields. GET /v1/events/{id} answers with it, and each webhook delivery's body is exactly it.
 */
export function eventObject(e: EventDoc): Record<string, unknown> {
  return { id: e.id, type: e.type, created_at: e.created_at, livemode: e.livemode, ...e.payload };
}

export function createEvents(store: AppStore) {
  return {
    async get(caller: Caller, id: string): Promise<EventDoc> {
      const event = await store.get("events", id);
      if (!event || event.livemode !== caller.livemode) throw notFound("event", id);
      return event;
    },
    list: (caller: Caller, filter: { type?: string | undefined }, page: Page) =>
      store.list("events", { livemode: caller.livemode, ...(filter.type ? { type: filter.type } : {}) }, page),
  };
}

export type Events = ReturnType<typeof createEvents>;
