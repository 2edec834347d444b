import { afterEach, describe, expect, it, vi } from "vitest";
import { idFloor, idTimeMs, newId, randomBase62 } from "./ids.ts";

afterEach(() => {
  vi.useRealTimers();
});

describe("ids", () => {
  it("are the prefix and 24 base62 characters, as the contract's patterns say", () => {
    for (let i = 0; i < 100; i++) expect(newId("evt")).toMatch(/^evt_[0-9A-Za-z]{24}$/);
  });

  it("sort in the order they were made, from one millisecond to the next", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const made: string[] = [];
    for (const ms of [
      Date.UTC(2026, 10, 24),
      Date.UTC(2026, 10, 24) + 1,
      Date.UTC(2026, 10, 24) + 62,
      Date.UTC(2030, 0, 1),
    ]) {
      vi.setSystemTime(ms);
      made.push(newId("tx"));
    }
    expect([...made].sort()).toEqual(made);
  });

  it("differ within one millisecond, by their random part", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.UTC(2026, 10, 24));
    const ids = Array.from({ length: 1000 }, () => newId("evt"));
    expect(new Set(ids).size).toBe(1000);
    expect(new Set(ids.map((id) => id.slice(4, 12))).size).toBe(1);
  });

  it("sort in the order they were made within one millisecond too (the event stream reads that order)", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.UTC(2026, 10, 27));
    const made = Array.from({ length: 1000 }, () => newId("evt"));
    expect([...made].sort()).toEqual(made);
  });

  it("draw every base62 character", () => {
    expect(new Set(randomBase62(5000)).size).toBe(62);
  });

  it("tell the millisecond they were made in, and the least id made from a time on sorts before every later one", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-11-27T21:00:00.123Z"));
    const id = newId("evt");
    expect(idTimeMs(id)).toBe(Date.parse("2026-11-27T21:00:00.123Z"));
    expect(idFloor("evt", Date.parse("2026-11-27T21:00:00.123Z")) <= id).toBe(true);
    expect(idFloor("evt", Date.parse("2026-11-27T21:00:00.124Z")) > id).toBe(true);
  });
});
