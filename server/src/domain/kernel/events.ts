import type { components } from "@payments/contract/types";
import type { BaseDoc, StoreOps } from "../../store/port.ts";
import type { Clock } from "./clock.ts";
import { newId } from "./ids.ts";
import { collection } from "./records.ts";

// Events (spec/events/): every change worth telling an integrator records one, through the same
// transaction handle as the change itself, marked `delivery_pending` there: the event is its own outbox
// entry, so the webhook dispatcher (domain/webhooks/dispatcher.ts) can never miss or invent a change,
// whatever crashes. The type and the payload come from the generated contract: a payload that does not
// match its event's schema in the spec fails `tsc` where it is built.

type Schemas = components["schemas"];

/** Every event type of the contract (EventType). */
export type EventType = Schemas["EventType"];

/** The contract's event of one type, envelope included (`PaymentCapturedEvent` for "payment.captured"). */
export type EventOf<T extends EventType> = Extract<Schemas["Event"], { type: T }>;

/** The fields recordEvent adds to every event: the envelope. */
type Envelope = "id" | "type" | "created_at" | "livemode";

/** What a use case gives for an event of type T: the type's own fields, as its schema declares them. */
/** Distributive, so a `type` that could be several types needs a payload that fits the one it is. */
export type EventPayload<T extends EventType> = T extends EventType ? Omit<EventOf<T>, Envelope> : never;

export interface EventDoc extends BaseDoc {
  type: EventType;
  /** The type's own fields (tx_id, score, ...), as recordEvent checked them; the API flattens them beside the envelope. */
  payload: Record<string, unknown>;
  /**
   * The outbox flag: true from the transaction that records the event until the webhook dispatcher has
   * created its deliveries (in one transaction with setting it false). Absent on events recorded before
   * webhook delivery existed, and false on events delivered to one endpoint only (test events) and on
   * events no endpoint gets, which the outbox's gate records already fanned out (kernel/commit-hooks.ts).
   */
  delivery_pending?: boolean;
}

export const eventCollections = {
  // The outbox: pending events, oldest first. Each environment's events in order (lists, the stream,
  // a created range) need no index of their own: every collection has one on (livemode, created_at, id)
  // (store/sqlite.ts; MongoDB's adapter likewise), and a second on (livemode, created_at) cost every
  // event ~120 bytes on disk for nothing (issue 36).
  // The outbox index covers only the events still to fan out (IndexSpec.where): it stays the size of
  // the queue, not of the event history (issue 36).
  // listEvents by type reads its page straight from the index, in the listing order (issue 36).
  events: collection<EventDoc>([
    { fields: ["livemode", "type", "created_at", "id"] },
    { fields: ["delivery_pending", "created_at"], where: { delivery_pending: true } },
  ]),
};

/** The one write recordEvent makes, through whatever transaction the change runs in. */
export type EventTx = Pick<StoreOps<{ events: EventDoc }>, "insert">;

/**
 * Records an event of `type` inside the transaction `tx` that makes the change it reports. `deliver:
 * false` keeps it out of the fan-out (a test event goes to one endpoint only).
 */
export async function recordEvent<T extends EventType>(
  tx: EventTx,
  clock: Pick<Clock, "createdAt">,
  livemode: boolean,
  type: T,
  payload: EventPayload<T>,
  options: { deliver?: boolean } = {},
): Promise<EventDoc> {
  const event: EventDoc = {
    id: newId("evt"),
    livemode,
    created_at: clock.createdAt(livemode),
    type,
    // cast: a payload is one of the contract's event objects, which the generic EventPayload<T> hides.
    payload: payload as Record<string, unknown>,
    delivery_pending: options.deliver ?? true,
  };
  await tx.insert("events", event);
  return event;
}

/**
 * The event as the API shows it (the contract's Event): flat, the envelope first, then the type's own
 * fields. GET /v1/events/{id} answers with it, and each webhook delivery's body is exactly it. The
 * payload was checked against its type's schema when it was recorded.
 */
export function eventObject(e: EventDoc): Schemas["Event"] {
  // The stored payload is the EventPayload of its type that recordEvent was given (the compiler checked it
  // there); the stored document keeps it as a plain record, so this cast restores what recordEvent checked.
  return { id: e.id, type: e.type, created_at: e.created_at, livemode: e.livemode, ...e.payload } as Schemas["Event"];
}
