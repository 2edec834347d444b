import { describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";

// Every change to a merchant leaves an event in the same transaction (spec/events/merchants.tsp):
// merchant.created, and merchant.updated with the previous values of exactly the fields that changed.

describe("merchant events", () => {
  it("records merchant.created with the merchant's id, name and status", async () => {
    const { domain, caller, store } = testDomain();
    const m = await domain.merchants.create(caller(), { name: "Acme", status: "suspended" });
    const events = await store.findAll("events", { type: "merchant.created" });
    expect(events.map((e) => e.payload)).toEqual([{ merchant_id: m.id, name: "Acme", status: "suspended" }]);
    expect(events[0]?.livemode).toBe(false);
  });

  it("records merchant.updated with only the changed fields' previous values, and nothing for a no-op", async () => {
    const { domain, caller, store } = testDomain();
    const m = await domain.merchants.create(caller(true), { name: "Acme", metadata: { a: "1" } });
    await domain.merchants.update(caller(true), m.id, { status: "suspended", name: "Acme" });
    await domain.merchants.update(caller(true), m.id, { name: "Acme Roasters", metadata: { a: "2" } });
    await domain.merchants.update(caller(true), m.id, { status: "suspended", metadata: { a: "2" } }); // no change
    const events = await store.findAll("events", { type: "merchant.updated" });
    // Newest first.
    expect(events.map((e) => e.payload)).toEqual([
      {
        merchant_id: m.id,
        name: "Acme Roasters",
        status: "suspended",
        previous_attributes: { name: "Acme", metadata: { a: "1" } },
      },
      { merchant_id: m.id, name: "Acme", status: "suspended", previous_attributes: { status: "active" } },
    ]);
    expect(events.every((e) => e.livemode)).toBe(true);
  });

  it("leaves no event when the update is refused", async () => {
    const { domain, caller, store } = testDomain();
    const m = await domain.merchants.create(caller(), { name: "Acme" });
    await domain.merchants.update(caller(), m.id, { status: "closed" });
    await expect(domain.merchants.update(caller(), m.id, { status: "active" })).rejects.toMatchObject({
      code: "invalid_state_transition",
    });
    expect(await store.findAll("events", { type: "merchant.updated" })).toHaveLength(1);
  });
});
