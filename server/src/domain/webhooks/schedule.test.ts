import { describe, expect, it } from "vitest";
import { DEFAULT_LIVE_SCHEDULE, DEFAULT_SANDBOX_SCHEDULE, JITTER, parseSchedule, retryDelayMs } from "./schedule.ts";

// The retry schedule the contract describes: exponential backoff with jitter, about three days in
// production, about two hours in the sandbox.

const hours = (seconds: number[]) => seconds.reduce((a, b) => a + b, 0) / 3600;

describe("retry schedule", () => {
  it("spans about three days in production and about two hours in the sandbox", () => {
    const live = parseSchedule(DEFAULT_LIVE_SCHEDULE);
    const sandbox = parseSchedule(DEFAULT_SANDBOX_SCHEDULE);
    expect(hours(live)).toBeGreaterThan(66);
    expect(hours(live)).toBeLessThan(84);
    expect(hours(sandbox)).toBeGreaterThan(1);
    expect(hours(sandbox)).toBeLessThan(3);
    // Backoff: no delay is shorter than the one before it.
    for (const list of [live, sandbox])
      for (let i = 1; i < list.length; i++) expect(list[i]).toBeGreaterThanOrEqual(list[i - 1] ?? 0);
  });

  it("applies at most ±20 % jitter and stops when the list is used up", () => {
    const list = [60, 300];
    expect(retryDelayMs(list, 1, () => 0)).toBe(60_000 * (1 - JITTER));
    expect(retryDelayMs(list, 1, () => 0.5)).toBe(60_000);
    expect(retryDelayMs(list, 2, () => 0.999999)).toBeCloseTo(300_000 * (1 + JITTER), -1);
    expect(retryDelayMs(list, 3, () => 0.5)).toBeNull();
    expect(retryDelayMs([], 1, () => 0.5)).toBeNull();
  });

  it("parses whole seconds and names what is wrong", () => {
    expect(parseSchedule(" 5, 30 ,120")).toEqual([5, 30, 120]);
    expect(parseSchedule("")).toEqual([]);
    expect(() => parseSchedule("5,1.5")).toThrow(/"1.5" is not a whole number/);
    expect(() => parseSchedule("0")).toThrow(/outside/);
    expect(() => parseSchedule("5,,6")).toThrow(/"" is not/);
    expect(() => parseSchedule(Array(51).fill("1").join(","))).toThrow(/at most 50/);
  });

  it("accepts its bounds exactly: 1 second, 7 days, 50 retries, and a list padded with spaces", () => {
    expect(parseSchedule("1")).toEqual([1]);
    expect(parseSchedule(String(7 * 86400))).toEqual([7 * 86400]);
    expect(() => parseSchedule(String(7 * 86400 + 1))).toThrow(/outside 1\.\.604800/);
    expect(parseSchedule(Array(50).fill("1").join(","))).toHaveLength(50);
    expect(parseSchedule("  \t ")).toEqual([]);
    expect(parseSchedule(" 60 ")).toEqual([60]);
  });
});
