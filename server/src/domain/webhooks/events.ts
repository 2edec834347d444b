import type { Page } from "../../store/port.ts";
import type { AppStore } from "../collections.ts";
import type { Caller } from "../kernel/caller.ts";
import { inEnvironment } from "../kernel/environment.ts";
import type { EventDoc, EventType } from "../kernel/events.ts";

// Reading events (getEvent, listEvents in spec/resources/events.tsp; scope `webhooks`). Events are
// recorded by every area through the kernel (kernel/events.ts); this is how an integrator reads them back.

export function createEvents(store: AppStore) {
  return {
    async get(caller: Caller, id: string): Promise<EventDoc> {
      return inEnvironment(await store.get("events", id), caller.livemode, "event", id);
    },
    list: (caller: Caller, filter: { type?: EventType | undefined }, page: Page) =>
      store.list("events", { livemode: caller.livemode, ...(filter.type ? { type: filter.type } : {}) }, page),
  };
}

export type Events = ReturnType<typeof createEvents>;
