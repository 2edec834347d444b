import { afterEach, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../store/sqlite.ts";
import { type AppStore, COLLECTIONS, type Docs } from "../areas.ts";
import { createClock } from "../kernel/clock.ts";
import { withCommitHooks } from "../kernel/commit-hooks.ts";
import { recordEvent } from "../kernel/events.ts";
import { fanOutGate } from "./fan-out.ts";
import { outboxOver } from "./outbox.ts";
import type { WebhookDeliveryDoc } from "./records.ts";
import { DELIVERY_MACHINE } from "./state.ts";

// The outbox (./outbox.ts) over the kernel's commit hooks (kernel/commit-hooks.ts): every use case writes
// through the hooked store, and the outbox tells the dispatcher after each commit that recorded an event
// some endpoint gets or wrote a delivery, so work starts at once on this instance. Nothing else wakes it:
// other collections, reads, a transaction that rolled back, an event no endpoint gets (which the gate
// records already fanned out, and which wakes only the event streams).

const stores: AppStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close().catch(() => {});
});

/** An enabled endpoint of the sandbox subscribed to `events`, made at `created_at` (only what the gate reads matters). */
const endpoint = (id: string, events: string[] = ["*"], created_at = "2026-11-21T09:00:00.000000Z") =>
  ({
    id,
    livemode: false,
    created_at,
    updated_at: created_at,
    url: "https://example.com/hook",
    description: null,
    enabled_events: events,
    status: "enabled",
    disabled_reason: null,
    failing_since: null,
    secret: { kek_id: "k", wrapped_dek: "x", sealed: "x" },
    previous_secret: null,
    previous_secret_expires_at: null,
  }) as never;

/** A hooked store and its outbox; `subscribed` (the default) gives the sandbox an endpoint taking every event. */
function setup({ subscribed = true } = {}) {
  const raw = openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
  stores.push(raw);
  const hooked = withCommitHooks(raw);
  const outbox = outboxOver(hooked);
  let signals = 0;
  let eventSignals = 0;
  const unsubscribe = outbox.subscribe(() => {
    signals++;
  });
  outbox.events.subscribe(() => {
    eventSignals++;
  });
  const now = () => new Date("2026-11-21T10:00:00Z");
  const clock = createClock(now);
  const merchant = (id: string) => ({
    id,
    livemode: false,
    created_at: "2026-11-21T10:00:00.000000Z",
    updated_at: "2026-11-21T10:00:00.000000Z",
    name: "M",
    status: "active",
    metadata: {},
  });
  const ready = subscribed ? raw.insert("webhook_endpoints", endpoint("we_all")) : Promise.resolve();
  return {
    ready,
    raw,
    outbox,
    store: hooked.store,
    hooked,
    clock,
    merchant: merchant as (id: string) => never,
    unsubscribe,
    /** Commits that gave the dispatcher work (Outbox.subscribe). */
    get signals() {
      return signals;
    },
    /** Commits that recorded an event (Outbox.events). */
    get eventSignals() {
      return eventSignals;
    },
  };
}

const delivery = (id: string): WebhookDeliveryDoc => ({
  id,
  livemode: false,
  created_at: "2026-11-21T10:00:00.000000Z",
  updated_at: "2026-11-21T10:00:00.000000Z",
  endpoint_id: "we_1",
  event_id: `evt_${id}`,
  event_type: "payment.captured",
  status: DELIVERY_MACHINE.start("pending"),
  mode: "automatic",
  next_attempt_at: "2026-11-21T10:00:00.000000Z",
  claim: null,
  attempts: [],
});

describe("the outbox's watched store", () => {
  it("signals once after a transaction that recorded events commits, not before", async () => {
    const s = setup();
    await s.ready;
    let inside = -1;
    await s.store.transaction(async (tx) => {
      await recordEvent(tx, s.clock, false, "payment.captured", { tx_id: "tx_1" } as never);
      await recordEvent(tx, s.clock, false, "payment.captured", { tx_id: "tx_2" } as never);
      inside = s.signals;
    });
    expect(inside).toBe(0);
    expect(s.signals).toBe(1);
  });

  it("signals after a transaction that inserted or updated a delivery", async () => {
    const s = setup();
    await s.ready;
    await s.store.transaction((tx) => tx.insert("webhook_deliveries", delivery("whd_1")));
    expect(s.signals).toBe(1);
    await s.store.transaction((tx) =>
      tx.update("webhook_deliveries", "whd_1", { set: { next_attempt_at: "2026-11-21T10:00:01.000000Z" } }),
    );
    expect(s.signals).toBe(2);
  });

  it("does not signal for a transaction that wrote only other collections, or only read", async () => {
    const s = setup();
    await s.ready;
    await s.store.transaction(async (tx) => {
      await tx.insert("merchants", s.merchant("mch_1"));
      await tx.update("merchants", "mch_1", { set: { name: "N" } });
      await tx.findAll("events", {});
      await tx.get("webhook_deliveries", "whd_x");
      await tx.findOne("webhook_deliveries", { status: "pending" });
      await tx.list("events", {}, { limit: 10 });
    });
    expect(s.signals).toBe(0);
  });

  it("does not signal for a transaction that rolled back", async () => {
    const s = setup();
    await s.ready;
    await expect(
      s.store.transaction(async (tx) => {
        await recordEvent(tx, s.clock, false, "payment.captured", { tx_id: "tx_1" } as never);
        throw new Error("refused");
      }),
    ).rejects.toThrow("refused");
    expect(s.signals).toBe(0);
    expect(await s.raw.findAll("events", {})).toEqual([]);
  });

  it("signals after each single write of an event or a delivery outside a transaction, once it is done", async () => {
    const s = setup();
    await s.ready;
    // What a listener reads when it is told: the write is there already.
    const reads: Promise<unknown>[] = [];
    const unsub = s.outbox.subscribe(() => {
      reads.push(s.raw.get("webhook_deliveries", "whd_1"));
    });
    await s.store.insert("webhook_deliveries", delivery("whd_1"));
    expect(s.signals).toBe(1);
    expect(await reads[0]).toMatchObject({ id: "whd_1", claim: null });
    unsub();
    await s.store.update("webhook_deliveries", "whd_1", { set: { claim: "a:1" } });
    expect(s.signals).toBe(2);
    expect(reads).toHaveLength(1);
    await s.store.insert("merchants", s.merchant("mch_1"));
    await s.store.update("merchants", "mch_1", { set: { name: "N" } });
    expect(s.signals).toBe(2);
  });

  it("passes reads, deletes and the store's own operations through unchanged", async () => {
    const s = setup();
    await s.ready;
    await s.store.insert("merchants", s.merchant("mch_1"));
    await s.store.insert("merchants", s.merchant("mch_2"));
    expect((await s.store.get("merchants", "mch_1"))?.id).toBe("mch_1");
    expect((await s.store.findOne("merchants", { id: "mch_2" } as never))?.id).toBe("mch_2");
    expect((await s.store.findAll("merchants", {})).map((m) => m.id).sort()).toEqual(["mch_1", "mch_2"]);
    expect((await s.store.list("merchants", {}, { limit: 1 })).data).toHaveLength(1);
    expect(await s.store.delete("merchants", "mch_1")).toBe(true);
    expect(await s.store.deleteMany("merchants", {})).toBe(1);
    await s.store.insert("webhook_deliveries", delivery("whd_1"));
    expect(await s.store.delete("webhook_deliveries", "whd_1")).toBe(true);
    expect(s.signals).toBe(1); // the insert, not the delete
    expect(s.store.kind).toBe("sqlite");
    await expect(s.store.ready(1000)).resolves.toBeUndefined();
    await expect(s.store.scrub()).resolves.toBeUndefined();
    expect(s.outbox.unwatched).toBe(s.raw);
    await s.store.close();
    await expect(s.raw.get("merchants", "mch_1")).rejects.toThrow();
  });

  it("stops signalling a listener that unsubscribed, and signals every listener", async () => {
    const s = setup();
    await s.ready;
    let other = 0;
    s.outbox.subscribe(() => {
      other++;
    });
    await s.store.insert("webhook_deliveries", delivery("whd_1"));
    s.unsubscribe();
    await s.store.insert("webhook_deliveries", delivery("whd_2"));
    expect(s.signals).toBe(1);
    expect(other).toBe(2);
  });

  it("writes through the unwatched store signal nothing", async () => {
    const s = setup();
    await s.ready;
    await s.outbox.unwatched.insert("webhook_deliveries", delivery("whd_1"));
    await s.outbox.unwatched.transaction((tx) =>
      recordEvent(tx, s.clock, false, "payment.captured", { tx_id: "tx_1" } as never),
    );
    expect(s.signals).toBe(0);
  });

  it("calls each watcher once per commit, and only for the collections it watches (the kernel's hooks)", async () => {
    const s = setup();
    await s.ready;
    let merchants = 0;
    s.hooked.afterCommitTo(["merchants"], () => {
      merchants++;
    });
    await s.store.transaction(async (tx) => {
      await recordEvent(tx, s.clock, false, "payment.captured", { tx_id: "tx_1" } as never);
      await tx.insert("webhook_deliveries", delivery("whd_1"));
    });
    expect([s.signals, merchants]).toEqual([1, 0]);
    await s.store.transaction(async (tx) => {
      await tx.insert("merchants", s.merchant("mch_1"));
      await tx.update("merchants", "mch_1", { set: { name: "N" } });
    });
    expect([s.signals, merchants]).toEqual([1, 1]);
  });
  it("records an event no endpoint gets already fanned out, and wakes only the event streams", async () => {
    const s = setup({ subscribed: false });
    const event = await s.store.transaction((tx) =>
      recordEvent(tx, s.clock, false, "payment.captured", { tx_id: "tx_1" } as never),
    );
    expect((await s.raw.get("events", event.id))?.delivery_pending).toBe(false);
    expect(event.delivery_pending).toBe(true); // the caller's object is left as it was
    expect([s.signals, s.eventSignals]).toEqual([0, 1]);
    // Outside a transaction too.
    await recordEvent(s.store, s.clock, false, "payment.captured", { tx_id: "tx_2" } as never);
    expect(await s.raw.findAll("events", { delivery_pending: true })).toEqual([]);
    expect([s.signals, s.eventSignals]).toEqual([0, 2]);
  });

  it("keeps an event pending only for an enabled endpoint of its environment, subscribed to it and made before it", async () => {
    const s = setup({ subscribed: false });
    const record = (livemode: boolean, type = "payment.captured") =>
      s.store.transaction((tx) => recordEvent(tx, s.clock, livemode, type as "payment.captured", {} as never));
    const pending = async (livemode: boolean, type?: string) =>
      (await s.raw.get("events", (await record(livemode, type)).id))?.delivery_pending;
    await s.raw.insert("webhook_endpoints", endpoint("we_refunds", ["payment.refunded"]));
    await s.raw.insert("webhook_endpoints", endpoint("we_later", ["*"], "2026-11-21T11:00:00.000000Z"));
    await s.raw.insert("webhook_endpoints", { ...(endpoint("we_off") as object), status: "disabled" } as never);
    expect(await pending(false)).toBe(false);
    expect(await pending(false, "payment.refunded")).toBe(true);
    expect(s.signals).toBe(1);
    await s.raw.insert("webhook_endpoints", { ...(endpoint("we_live") as object), livemode: true } as never);
    expect(await pending(false)).toBe(false);
    expect(await pending(true)).toBe(true);
    // Made at the very instant of the event: it subscribes (fan-out.ts subscribes).
    await s.raw.update("webhook_endpoints", "we_later", { set: { created_at: "2026-11-21T10:00:00.000000Z" } });
    expect(await pending(false)).toBe(true);
    // A test event is never the fan-out's, endpoint or not.
    const test = await s.store.transaction((tx) =>
      recordEvent(tx, s.clock, false, "webhook_endpoint.test", { endpoint_id: "we_later" }, { deliver: false }),
    );
    expect((await s.raw.get("events", test.id))?.delivery_pending).toBe(false);
  });

  it("reads the endpoints once per transaction and environment, and again in the next transaction", async () => {
    const reads: boolean[] = [];
    const gate = fanOutGate();
    const reader = (found: unknown[]) => ({
      findAll: (_c: string, where: { livemode?: boolean }) => {
        reads.push(where.livemode === true);
        return Promise.resolve(found);
      },
    });
    const event = (livemode: boolean) =>
      ({
        id: "evt_1",
        livemode,
        created_at: "2026-11-21T10:00:00.000000Z",
        type: "payment.captured",
        payload: {},
      }) as const;
    const first = reader([]) as never;
    expect(await gate(first, event(false))).toBe(false);
    expect(await gate(first, event(false))).toBe(false);
    expect(await gate(first, event(true))).toBe(false);
    expect(reads).toEqual([false, true]);
    const second = reader([endpoint("we_1")]) as never;
    expect(await gate(second, event(false))).toBe(true);
    expect(reads).toEqual([false, true, false]);
  });

  it("without a gate (a hooked store no outbox watches), every event recorded for delivery stays pending", async () => {
    const raw = openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
    stores.push(raw);
    const hooked = withCommitHooks(raw);
    const event = await hooked.store.transaction((tx) =>
      recordEvent(
        tx,
        createClock(() => new Date()),
        false,
        "payment.captured",
        {} as never,
      ),
    );
    expect((await raw.get("events", event.id))?.delivery_pending).toBe(true);
  });

  it("signals the dispatcher when an update puts an event back in the outbox", async () => {
    const s = setup({ subscribed: false });
    const event = await recordEvent(s.store, s.clock, false, "payment.captured", {} as never);
    expect(s.signals).toBe(0);
    await s.store.update("events", event.id, { set: { delivery_pending: true } });
    expect(s.signals).toBe(1);
    await s.store.transaction((tx) => tx.update("events", event.id, { set: { delivery_pending: true } }));
    expect(s.signals).toBe(2);
  });
});
