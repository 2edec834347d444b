import { describe, expect, it } from "vitest";
import { openSqliteStore } from "../../store/sqlite.ts";
import { COLLECTIONS, type Docs } from "../areas.ts";
import { createClock } from "./clock.ts";
import { type EventDoc, eventObject, recordEvent } from "./events.ts";

// recordEvent is typed by the contract: an event's type comes from EventType and its payload must match
// that type's schema (spec/events/). The `@ts-expect-error` lines below are the proof: if a wrong payload
// compiled, the directive would be unused and `tsc` (npm test's typecheck) would fail.

const clock = createClock(() => new Date("2026-11-24T10:00:00Z"));
const captured = {
  tx_id: "tx_9Lm2QwErTy7UiOp3AsDf5GhJ",
  merchant_id: "mch_9Lm2QwErTy7UiOp3AsDf5GhJ",
  amount: 2500,
  currency: "USD",
  status: "captured" as const,
  payment_method_type: "card",
  amount_captured: 2500,
};

/** Type checks only: never called, so nothing is written. */
function compileTimeChecks(tx: Parameters<typeof recordEvent>[0]) {
  void recordEvent(tx, clock, false, "payment.captured", captured);
  // @ts-expect-error a payload missing a field its schema requires (amount_captured)
  void recordEvent(tx, clock, false, "payment.captured", { ...captured, amount_captured: undefined });
  // @ts-expect-error a field of the wrong type
  void recordEvent(tx, clock, false, "payment.captured", { ...captured, amount: "2500" });
  // @ts-expect-error a value its schema's enum does not allow
  void recordEvent(tx, clock, false, "payment.captured", { ...captured, status: "paid" });
  // @ts-expect-error another type's payload
  void recordEvent(tx, clock, false, "fraud.evaluated", captured);
  // @ts-expect-error an event type the contract does not define
  void recordEvent(tx, clock, false, "payment.settled", captured);
  const created = { merchant_id: "mch_9Lm2QwErTy7UiOp3AsDf5GhJ", name: "M", status: "active" as const };
  void recordEvent(tx, clock, false, "merchant.created", created);
  // @ts-expect-error the envelope is recordEvent's to write, not the payload's
  void recordEvent(tx, clock, false, "merchant.created", { ...created, id: "evt_x" });
}

describe("recordEvent", () => {
  it("writes the event with its envelope in the transaction it is given, pending delivery", async () => {
    const store = openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
    try {
      const event: EventDoc = await store.transaction((tx) =>
        recordEvent(tx, clock, true, "payment.captured", captured),
      );
      expect(event).toMatchObject({
        type: "payment.captured",
        livemode: true,
        delivery_pending: true,
        payload: captured,
      });
      expect(event.id).toMatch(/^evt_[0-9A-Za-z]{24}$/);
      expect(await store.get("events", event.id)).toEqual(event);
      expect(eventObject(event)).toEqual({
        id: event.id,
        type: "payment.captured",
        created_at: event.created_at,
        livemode: true,
        ...captured,
      });
      expect(compileTimeChecks).toBeTypeOf("function");
    } finally {
      await store.close();
    }
  });

  it("keeps a test event out of the fan-out when asked", async () => {
    const store = openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
    try {
      const event = await store.transaction((tx) =>
        recordEvent(tx, clock, false, "webhook_endpoint.test", { endpoint_id: "we_x" }, { deliver: false }),
      );
      expect((await store.get("events", event.id))?.delivery_pending).toBe(false);
    } finally {
      await store.close();
    }
  });
});
