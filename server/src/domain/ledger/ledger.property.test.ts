import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import { DomainError } from "../kernel/errors.ts";

// Property-based tests of the ledger invariants: whatever sequence of charges, captures, voids, refunds and
// local payments happens — some of them concurrently — every balance equals the sum of its postings' lines,
// nothing is negative, and refunds never exceed captures.

const CURRENCIES = ["USD", "JPY", "KWD"] as const;

type Command =
  | { kind: "charge"; merchant: number; currency: (typeof CURRENCIES)[number]; amount: number; capture: boolean }
  | { kind: "pix"; merchant: number; amount: number }
  | { kind: "capture"; charge: number; fraction: number }
  | { kind: "void"; charge: number }
  | { kind: "refund"; charge: number; amount: number | undefined }
  | { kind: "complete"; charge: number }
  | { kind: "expire"; charge: number };

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    kind: fc.constant("charge" as const),
    merchant: fc.nat(2),
    currency: fc.constantFrom(...CURRENCIES),
    amount: fc.integer({ min: 1, max: 5000 }),
    capture: fc.boolean(),
  }),
  fc.record({ kind: fc.constant("pix" as const), merchant: fc.nat(2), amount: fc.integer({ min: 1, max: 5000 }) }),
  fc.record({
    kind: fc.constant("capture" as const),
    charge: fc.nat(30),
    fraction: fc.double({ min: 0.01, max: 1, noNaN: true }),
  }),
  fc.record({ kind: fc.constant("void" as const), charge: fc.nat(30) }),
  fc.record({
    kind: fc.constant("refund" as const),
    charge: fc.nat(30),
    amount: fc.option(fc.integer({ min: 1, max: 3000 }), { nil: undefined }),
  }),
  fc.record({ kind: fc.constant("complete" as const), charge: fc.nat(30) }),
  fc.record({ kind: fc.constant("expire" as const), charge: fc.nat(30) }),
);

async function setup() {
  const ctx = testDomain();
  const c = ctx.caller();
  const merchants = [];
  for (let i = 0; i < 3; i++) merchants.push(await ctx.domain.merchants.create(c, { name: `m${i}` }));
  const token = await ctx.domain.tokens.create(c, {
    card: "4242424242424242",
    holder: "P",
    exp_month: 12,
    exp_year: 2031,
  });
  return { ...ctx, merchants, token, chargeIds: [] as string[] };
}

type World = Awaited<ReturnType<typeof setup>>;

async function run(world: World, cmd: Command): Promise<void> {
  const { domain, caller, merchants, token, chargeIds } = world;
  const c = caller();
  const pick = (i: number) => chargeIds[i % Math.max(chargeIds.length, 1)];
  try {
    switch (cmd.kind) {
      case "charge": {
        const charge = await domain.charges.create(c, {
          merchant_id: merchants[cmd.merchant]?.id ?? "",
          amount: cmd.amount,
          currency: cmd.currency,
          payment_method: { type: "card", token: token.id },
          capture: cmd.capture,
        });
        chargeIds.push(charge.id);
        return;
      }
      case "pix": {
        const charge = await domain.charges.create(c, {
          merchant_id: merchants[cmd.merchant]?.id ?? "",
          amount: cmd.amount,
          currency: "BRL",
          payment_method: { type: "pix" },
        });
        chargeIds.push(charge.id);
        return;
      }
      default: {
        const id = pick(cmd.charge);
        if (!id) return;
        if (cmd.kind === "capture") {
          const charge = await domain.charges.get(c, id);
          await domain.charges.capture(c, id, Math.max(1, Math.floor(charge.amount * cmd.fraction)));
        } else if (cmd.kind === "void") await domain.charges.void(c, id);
        else if (cmd.kind === "refund") await domain.charges.refund(c, id, { amount: cmd.amount });
        else if (cmd.kind === "complete") await domain.charges.complete(c, id);
        else await domain.charges.expire(c, id);
      }
    }
  } catch (err) {
    // Refusals (409 transitions, 422 balance, 400 amounts) are expected outcomes; anything else is a bug.
    if (!(err instanceof DomainError) || err.code === "internal_error") throw err;
  }
}

async function checkInvariants(world: World) {
  const { store } = world;
  const balances = await store.findAll("balances", {}, 10_000);
  // Each movement is recorded once, as its posting's lines (postings.ts): the balances are their sums.
  const lines = (await store.findAll("postings", {}, 100_000)).flatMap((p) =>
    p.lines.map((l) => ({ ...l, currency: p.currency })),
  );
  for (const b of balances) {
    expect(b.available).toBeGreaterThanOrEqual(0);
    expect(b.pending).toBeGreaterThanOrEqual(0);
    const mine = lines.filter((l) => l.currency === b.currency);
    const sum = (bucket: string) =>
      mine.filter((l) => l.account === `merchant:${b.merchant_id}:${bucket}`).reduce((s, l) => s + l.amount, 0);
    expect(sum("available")).toBe(b.available);
    expect(sum("pending")).toBe(b.pending);
  }
  const charges = await store.findAll("charges", {}, 10_000);
  const refunds = await store.findAll("refunds", {}, 100_000);
  const net = new Map<string, number>();
  for (const ch of charges) {
    expect(ch.amount_captured).toBeGreaterThanOrEqual(0);
    expect(ch.amount_captured).toBeLessThanOrEqual(ch.amount);
    expect(ch.amount_refunded).toBeGreaterThanOrEqual(0);
    expect(ch.amount_refunded).toBeLessThanOrEqual(ch.amount_captured);
    const refunded = refunds.filter((r) => r.charge_id === ch.id).reduce((s, r) => s + r.amount, 0);
    expect(refunded).toBe(ch.amount_refunded);
    if (ch.amount_refunded > 0) expect(["partially_refunded", "refunded"]).toContain(ch.status);
    if (ch.status === "refunded") expect(ch.amount_refunded).toBe(ch.amount_captured);
    const key = `${ch.merchant_id}:${ch.currency}`;
    net.set(key, (net.get(key) ?? 0) + ch.amount_captured - ch.amount_refunded);
  }
  // Money is conserved: what merchants hold is exactly what was captured minus what was refunded.
  for (const b of balances) expect(b.available + b.pending).toBe(net.get(`${b.merchant_id}:${b.currency}`) ?? 0);
}

describe("ledger invariants (fast-check)", () => {
  it("hold after any sequence of operations", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 40 }), async (commands) => {
        const world = await setup();
        try {
          for (const cmd of commands) await run(world, cmd);
          await checkInvariants(world);
        } finally {
          await world.store.close();
        }
      }),
      { numRuns: 60 },
    );
  });

  it("hold when operations run concurrently", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(command, { minLength: 1, maxLength: 15 }),
        fc.array(fc.array(command, { minLength: 2, maxLength: 12 }), { minLength: 1, maxLength: 4 }),
        async (prefix, batches) => {
          const world = await setup();
          try {
            for (const cmd of prefix) await run(world, cmd);
            for (const batch of batches) await Promise.all(batch.map((cmd) => run(world, cmd)));
            await checkInvariants(world);
          } finally {
            await world.store.close();
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it.each([
    [500, 20],
    [300, 33], // 33 × 300 = 9,900: the 34th would overshoot; the charge's own limit must stop it
  ])("never lets concurrent refunds exceed the capture: 100 × %i on 10,000 → exactly %i", async (amount, succeed) => {
    const world = await setup();
    const c = world.caller();
    // Another capture gives the merchant more than enough balance, so only the charge's own limit can stop a refund.
    await world.domain.charges.create(c, {
      merchant_id: world.merchants[0]?.id ?? "",
      amount: 90_000,
      currency: "USD",
      payment_method: { type: "card", token: world.token.id },
    });
    const charge = await world.domain.charges.create(c, {
      merchant_id: world.merchants[0]?.id ?? "",
      amount: 10_000,
      currency: "USD",
      payment_method: { type: "card", token: world.token.id },
    });
    const results = await Promise.allSettled(
      Array.from({ length: 100 }, () => world.domain.charges.refund(c, charge.id, { amount })),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(succeed);
    // Once fully refunded the charge is past refunding (invalid_state_transition); before that, a refund
    // larger than what is left is refund_exceeds_remaining.
    const refused = amount * succeed === 10_000 ? "invalid_state_transition" : "refund_exceeds_remaining";
    for (const r of results) {
      if (r.status === "rejected") expect((r.reason as DomainError).code).toBe(refused);
    }
    const after = await world.domain.charges.get(c, charge.id);
    expect(after.amount_refunded).toBe(amount * succeed);
    await checkInvariants(world);
    await world.store.close();
  });
});
