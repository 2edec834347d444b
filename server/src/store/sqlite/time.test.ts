import { describe, expect, it } from "vitest";
import { createdAt, iso } from "../../domain/kernel/time.ts";
import { isStoredForm, microsOf, timeColumn, timestampOf } from "./time.ts";

// Timestamps as integers of microseconds in SQLite's columns (time.ts, issue 36): exact both ways for
// the stored format, in the text's order, and nothing else taken for a timestamp.

describe("a timestamp's column value", () => {
  it("gives the stored format back exactly, to the microsecond", () => {
    for (const text of [
      "2026-11-28T11:07:05.002002Z",
      "1970-01-01T00:00:00.000000Z",
      "1969-12-31T23:59:59.999999Z",
      "2000-02-29T12:00:00.000001Z",
      "1700-03-04T05:06:07.080900Z",
      iso(new Date()),
      createdAt(new Date()),
    ]) {
      const micros = timeColumn("created_at", text);
      expect(timestampOf(micros)).toBe(text);
      expect(isStoredForm(text)).toBe(true);
    }
    expect(microsOf("1970-01-01T00:00:01.000002Z")).toBe(1_000_002);
  });

  it("answers a text read just before as it did, and the next text anew (its memo of the last one)", () => {
    const valid = "2026-11-28T11:07:05.002002Z";
    const invalid = "2026-02-30T11:07:05.002002Z";
    expect(microsOf(valid)).toBe(microsOf(valid));
    expect(microsOf(invalid)).toBeUndefined();
    expect(microsOf(invalid)).toBeUndefined();
    expect(microsOf(valid)).toBe(1_795_864_025_002_002);
    expect(microsOf("2026-11-28T11:07:05.002003Z")).toBe(1_795_864_025_002_003);
  });

  it("orders as the text does", () => {
    const texts = [
      "1969-12-31T23:59:59.999999Z",
      "1970-01-01T00:00:00.000000Z",
      "2026-11-28T11:07:05.002002Z",
      "2026-11-28T11:07:05.002003Z",
      "2026-11-28T11:07:06.000000Z",
      "2255-01-01T00:00:00.000000Z",
    ];
    const micros = texts.map((t) => timeColumn("created_at", t));
    expect([...micros].sort((a, b) => a - b)).toEqual(micros);
  });

  it("reads fewer decimals as their instant, which the document then keeps as written", () => {
    expect(microsOf("2024-01-01T00:00:02.000Z")).toBe(microsOf("2024-01-01T00:00:02.000000Z"));
    expect(microsOf("2024-01-01T00:00:02Z")).toBe(microsOf("2024-01-01T00:00:02.000000Z"));
    expect(microsOf("2024-01-01T00:00:02.5Z")).toBe(microsOf("2024-01-01T00:00:02.500000Z"));
    expect(isStoredForm("2024-01-01T00:00:02.000Z")).toBe(false);
  });

  it("refuses what is no timestamp, naming the field", () => {
    for (const value of [
      "t",
      "2026",
      "2026-02-30T00:00:00.000000Z",
      "2026-11-28T24:00:00.000000Z",
      "2026-11-28 11:07:05.002002Z",
      "2026-11-28T11:07:05.002002+01:00",
      "2026-11-28T11:07:05.0020021Z",
      "9999-12-31T23:59:59.999999Z",
      "0042-03-04T05:06:07.080900Z",
      1_000_000,
      true,
    ]) {
      expect(() => timeColumn("expires_at", value)).toThrow(/expires_at must be a timestamp/);
      expect(isStoredForm(value)).toBe(false);
    }
  });
});
