import { afterEach, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../store/sqlite.ts";
import { type AppStore, COLLECTIONS, type Docs } from "../areas.ts";
import { createClock } from "../kernel/clock.ts";
import { withCommitHooks } from "../kernel/commit-hooks.ts";
import { recordEvent } from "../kernel/events.ts";
import { outboxOver } from "./outbox.ts";
import type { WebhookDeliveryDoc } from "./records.ts";
import { DELIVERY_MACHINE } from "./state.ts";

// The outbox (./outbox.ts) over the kernel's commit hooks (kernel/commit-hooks.ts): every use case writes
// through the hooked store, and the outbox tells the dispatcher after each commit that wrote an event or
// a delivery, so work starts at once on this instance. Nothing else wakes it: other collections, reads,
// a transaction that rolled back.

const stores: AppStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close().catch(() => {});
});

function setup() {
  const raw = openSqliteStore<Docs>({ path: ":memory:", collections: COLLECTIONS });
  stores.push(raw);
  const hooked = withCommitHooks(raw);
  const outbox = outboxOver(hooked);
  let signals = 0;
  const unsubscribe = outbox.subscribe(() => {
    signals++;
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
  return {
    raw,
    outbox,
    store: hooked.store,
    hooked,
    clock,
    merchant: merchant as (id: string) => never,
    unsubscribe,
    get signals() {
      return signals;
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
    await s.store.transaction((tx) => tx.insert("webhook_deliveries", delivery("whd_1")));
    expect(s.signals).toBe(1);
    await s.store.transaction((tx) =>
      tx.update("webhook_deliveries", "whd_1", { set: { next_attempt_at: "2026-11-21T10:00:01.000000Z" } }),
    );
    expect(s.signals).toBe(2);
  });

  it("does not signal for a transaction that wrote only other collections, or only read", async () => {
    const s = setup();
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
    await s.outbox.unwatched.insert("webhook_deliveries", delivery("whd_1"));
    await s.outbox.unwatched.transaction((tx) =>
      recordEvent(tx, s.clock, false, "payment.captured", { tx_id: "tx_1" } as never),
    );
    expect(s.signals).toBe(0);
  });

  it("calls each watcher once per commit, and only for the collections it watches (the kernel's hooks)", async () => {
    const s = setup();
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
});
