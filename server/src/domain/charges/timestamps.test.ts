import { afterEach, describe, expect, it } from "vitest";
import { testDomain } from "../../../test-support/domain.ts";
import { iso } from "../kernel/time.ts";

// One timestamp per creation (Charge in spec/resources/charges.tsp): a new charge's `updated_at` is
// never before its `created_at`, even when the clock moves between the use case's first reading and the
// creation's stamp. The clock here moves a millisecond on every reading, so an `updated_at` taken from an
// earlier reading than `created_at` shows.

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe("a new charge's timestamps", () => {
  it.each([true, false])("updated_at is created_at to the millisecond (capture: %s)", async (capture) => {
    let ms = Date.UTC(2026, 10, 27, 12, 0, 0);
    const ctx = testDomain({ now: () => new Date(ms++) });
    close = () => ctx.store.close();
    const caller = ctx.caller(false);
    const merchant = await ctx.domain.merchants.create(caller, { name: "Shop" });
    const token = await ctx.domain.tokens.create(caller, {
      card: "4242424242424242",
      holder: "Ada",
      exp_month: 12,
      exp_year: 2031,
    });
    const charge = await ctx.domain.charges.create(caller, {
      merchant_id: merchant.id,
      amount: 1000,
      currency: "USD",
      payment_method: { type: "card", token: token.id },
      capture,
    });
    const stored = await ctx.store.get("charges", charge.id);
    expect(Date.parse(stored?.updated_at ?? "")).toBeGreaterThanOrEqual(Math.floor(Date.parse(charge.created_at)));
    if (!capture) expect(stored?.updated_at).toBe(iso(new Date(charge.created_at)));
  });
});
