import type { Page } from "../store/port.ts";
import type { Caller, Now } from "./context.ts";
import { notFound } from "./errors.ts";
import { newId } from "./ids.ts";
import type { AppStore, AppTx, EventDoc } from "./records.ts";
import { createdAt } from "./time.ts";

// DESIGN §11: an event is written through the same transaction handle as the change that causes it,
// so the outbox the webhook dispatcher reads can never miss or invent a change.

export function recordEvent(
  tx: AppTx,
  now: Now,
  livemode: boolean,
  type: string,
  payload: Record<string, unknown>,
): Promise<EventDoc> {
  const event: EventDoc = { id: newId("evt"), livemode, created_at: createdAt(now()), type, payload };
  return tx.insert("events", event).then(() => event);
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
