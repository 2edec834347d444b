import { describe, expect, it } from "vitest";
import { createSimulatorProcessor, IdempotencyConflict } from "./processor-simulator.ts";

// The simulator honours idempotency keys as an acquirer does (domain/charges/processor.ts): the same key
// gets the same answer and applies nothing more; the same key for another request is refused.

const request = (overrides: Record<string, unknown> = {}) => ({
  idempotencyKey: "tx_1:authorize",
  chargeId: "tx_1",
  pan: "4242424242424242",
  expMonth: 12,
  expYear: 2031,
  amount: 1000,
  currency: "USD",
  capture: true,
  livemode: true,
  now: new Date("2026-11-27T10:00:00Z"),
  ...overrides,
});

describe("processor simulator", () => {
  it("answers a repeated authorization with the first answer and authorizes (and captures) once", async () => {
    const sim = createSimulatorProcessor({ count: true });
    const first = await sim.authorizeCard(request());
    // A repeat after a crash is sent later: the time is not part of the request.
    const again = await sim.authorizeCard(request({ now: new Date("2026-11-28T10:00:00Z") }));
    expect(first).toMatchObject({ approved: true, captured: true });
    expect(again).toEqual(first);
    const counts = sim.counts();
    expect(counts.calls["tx_1:authorize"]).toBe(2);
    expect(counts.applied.authorize).toEqual({ tx_1: 1 });
    expect(counts.applied.capture).toEqual({ [(first as { reference: string }).reference]: 1 });
  });

  it("gives the same reference to the same key, even from a fresh simulator (a restart)", async () => {
    const a = await createSimulatorProcessor().authorizeCard(request({ capture: false }));
    const b = await createSimulatorProcessor().authorizeCard(request({ capture: false }));
    expect(a).toEqual(b);
    const other = await createSimulatorProcessor().authorizeCard(
      request({ idempotencyKey: "tx_2:authorize", chargeId: "tx_2", capture: false }),
    );
    expect(other).not.toEqual(a);
  });

  it("refuses a key sent again with a different request", async () => {
    const sim = createSimulatorProcessor();
    await sim.authorizeCard(request());
    await expect(sim.authorizeCard(request({ amount: 2000 }))).rejects.toBeInstanceOf(IdempotencyConflict);
  });

  it("captures, voids, refunds, reverses and starts a local payment once per key", async () => {
    const sim = createSimulatorProcessor({ count: true });
    const capture = { idempotencyKey: "tx_1:capture", reference: "ref", amount: 500, currency: "usd" };
    expect(await sim.capture(capture)).toEqual({ status: "confirmed" });
    await sim.capture(capture);
    const refund = { idempotencyKey: "re_1:refund", reference: "ref", amount: 200, currency: "usd" };
    await sim.refund(refund);
    await sim.refund(refund);
    await sim.refund({ ...refund, idempotencyKey: "re_2:refund" });
    await sim.void({ idempotencyKey: "tx_3:void", reference: "ref3" });
    await sim.void({ idempotencyKey: "tx_3:void", reference: "ref3" });
    await sim.reverse({ idempotencyKey: "tx_4:reverse", reference: "ref4" });
    await sim.reverse({ idempotencyKey: "tx_4:reverse", reference: "ref4" });
    const pix = {
      idempotencyKey: "tx_5:start_local",
      chargeId: "tx_5",
      method: "pix",
      amount: 900,
      currency: "brl",
    } as const;
    const first = await sim.startLocalPayment({ ...pix, now: new Date("2026-11-28T10:00:00Z") });
    // A repeat at another time is the same call (its time is not part of the request): the same answer.
    expect(await sim.startLocalPayment({ ...pix, now: new Date("2026-11-28T10:05:00Z") })).toEqual(first);
    expect(sim.counts().applied).toEqual({
      authorize: {},
      capture: { ref: 1 },
      void: { ref3: 1 },
      refund: { "re_1:refund": 1, "re_2:refund": 1 },
      reverse: { ref4: 1 },
      start_local: { tx_5: 1 },
    });
  });

  it("declines the test cards, and an expired card, without authorizing", async () => {
    const sim = createSimulatorProcessor({ count: true });
    expect(await sim.authorizeCard(request({ pan: "4000000000000002" }))).toMatchObject({
      approved: false,
      failureCode: "card_declined",
    });
    expect(
      await sim.authorizeCard(request({ idempotencyKey: "tx_5:authorize", chargeId: "tx_5", expYear: 2025 })),
    ).toMatchObject({ approved: false, failureCode: "expired_card" });
    expect(sim.counts().applied.authorize).toEqual({});
  });

  it("forgets the oldest keys beyond its bound (bounded memory)", async () => {
    const sim = createSimulatorProcessor({ rememberedKeys: 1 });
    await sim.authorizeCard(request());
    await sim.authorizeCard(request({ idempotencyKey: "tx_2:authorize", chargeId: "tx_2" }));
    // tx_1's key is forgotten: a different request under it is no longer recognised as a conflict.
    await expect(sim.authorizeCard(request({ amount: 2000 }))).resolves.toMatchObject({ approved: true });
  });
});
