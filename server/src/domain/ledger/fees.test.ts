import { describe, expect, it } from "vitest";
import { feeFor, NO_FEE, rateFor, readFeeSchedule } from "./fees.ts";

/** Why `value` is not a fee schedule, or null. */
const scheduleProblem = (value: unknown) => {
  const read = readFeeSchedule(value);
  return typeof read === "string" ? read : null;
};

// The fee arithmetic (docs/money.md "Fees"): whole minor units, half up, never more than the amount.

describe("fees", () => {
  const schedule = { card: { percent_bps: 290, fixed: { USD: 30, JPY: 0 } }, pix: { percent_bps: 99, fixed: {} } };

  it("takes the rate of the method and currency; an unlisted method or currency has no part of it", () => {
    expect(rateFor(schedule, "card", "USD")).toEqual({ percent_bps: 290, fixed: 30 });
    expect(rateFor(schedule, "card", "EUR")).toEqual({ percent_bps: 290, fixed: 0 });
    expect(rateFor(schedule, "boleto", "BRL")).toEqual(NO_FEE);
    expect(rateFor({}, "card", "USD")).toEqual(NO_FEE);
  });

  it.each([
    [10_000, 290, 30, 320], // 2.9 % of 100.00 + 0.30
    [1_000, 290, 30, 59], // 29 + 30
    [50, 290, 0, 1], // 1.45 rounds down to 1
    [52, 290, 0, 2], // 1.508 rounds up to 2
    [100, 250, 0, 3], // exactly 2.5: half up
    [10, 290, 30, 10], // never more than the amount
    [999_999_000, 10_000, 0, 999_999_000], // 100 % of the largest amount, exact
    [0, 290, 30, 0],
  ])("on %i at %i bps + %i: %i", (amount, bps, fixed, fee) => {
    expect(feeFor({ percent_bps: bps, fixed }, amount)).toBe(fee);
  });

  it("is 0 for a charge made before fees (no rate)", () => {
    expect(feeFor(null, 1000)).toBe(0);
    expect(feeFor(undefined, 1000)).toBe(0);
  });

  it("checks a schedule, saying what is wrong in words", () => {
    expect(scheduleProblem(schedule)).toBeNull();
    expect(scheduleProblem({})).toBeNull();
    expect(scheduleProblem([])).toMatch(/JSON object of payment methods/);
    expect(scheduleProblem({ cash: { percent_bps: 1 } })).toMatch(/"cash" is not a payment method/);
    expect(scheduleProblem({ card: { percent_bps: 2.9 } })).toMatch(/card.percent_bps must be a whole number/);
    expect(scheduleProblem({ card: { percent_bps: 10_001 } })).toMatch(/from 0 to 10000/);
    expect(scheduleProblem({ card: { percent_bps: 1, fixed: { usd: 30 } } })).toMatch(/"usd" is not an ISO 4217 code/);
    expect(scheduleProblem({ card: { percent_bps: 1, fixed: { USD: -1 } } })).toMatch(/card.fixed.USD must be/);
    expect(scheduleProblem({ card: { percent_bps: 1, percent: 2 } })).toMatch(/unknown field\(s\) percent/);
  });

  it("reads a schedule in the stored shape: a method without `fixed` has an empty one", () => {
    expect(readFeeSchedule({ pix: { percent_bps: 100 }, card: { percent_bps: 290, fixed: { USD: 30 } } })).toEqual({
      pix: { percent_bps: 100, fixed: {} },
      card: { percent_bps: 290, fixed: { USD: 30 } },
    });
  });
});
