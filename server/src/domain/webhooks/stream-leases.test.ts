import { describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import { createStreamLeases, LEASE_MS } from "./stream-leases.ts";

// Event-stream slots (webhooks/stream-leases.ts): a key's streams are counted in the store, so the cap
// holds across instances on it; an instance that dies frees its slots when their leases end.

const START = new Date("2026-11-27T12:00:00Z");

function twoInstances() {
  const t = testDomain({ start: START });
  let clock = START;
  const now = () => clock;
  return {
    t,
    a: createStreamLeases({ store: t.store, now }),
    b: createStreamLeases({ store: t.store, now }),
    advance: (ms: number) => {
      clock = new Date(clock.getTime() + ms);
    },
  };
}

describe("event-stream slots", () => {
  it("hold the cap across two instances on one store, per key, even when they open at the same moment", async () => {
    const { a, b } = twoInstances();
    const opened = await Promise.all([
      ...Array.from({ length: 4 }, () => a.acquire("kid_one", false, 3)),
      ...Array.from({ length: 4 }, () => b.acquire("kid_one", false, 3)),
    ]);
    expect(opened.filter((l) => l !== null)).toHaveLength(3);
    expect(await a.heldFor("kid_one")).toBe(3);
    // Another key has slots of its own.
    expect(await b.acquire("kid_two", false, 3)).not.toBeNull();
    // Closing a stream on one instance frees its slot for the other.
    await opened.find((l) => l !== null)?.release();
    expect(await b.acquire("kid_one", false, 3)).not.toBeNull();
    expect(await b.acquire("kid_one", false, 3)).toBeNull();
  });

  it("free the slots of an instance that died once their leases end; a renewed lease is kept, a lost one says so", async () => {
    const { a, b, advance } = twoInstances();
    const dead = await a.acquire("kid_one", false, 2);
    const alive = await a.acquire("kid_one", false, 2);
    if (!dead || !alive) throw new Error("no slot");
    advance(LEASE_MS - 1_000);
    expect(await alive.renew()).toBe(true);
    expect(await b.acquire("kid_one", false, 2)).toBeNull();
    advance(2_000);
    // The dead one's lease ended: its slot is taken over; the renewed one's is not.
    const taken = await b.acquire("kid_one", false, 2);
    expect(taken).not.toBeNull();
    expect(await b.acquire("kid_one", false, 2)).toBeNull();
    expect(await dead.renew()).toBe(false);
    expect(await alive.renew()).toBe(true);
    // Its late release does not free the slot another stream now holds.
    await dead.release();
    expect(await b.heldFor("kid_one")).toBe(2);
  });

  it("are swept once their lease ended long ago", async () => {
    const { t, a, advance } = twoInstances();
    await a.acquire("kid_one", false, 2);
    advance(LEASE_MS);
    expect(await a.sweep()).toBe(0);
    advance(LEASE_MS + 1);
    expect(await a.sweep()).toBe(1);
    expect(await t.store.findAll("stream_leases", {})).toEqual([]);
  });
});
