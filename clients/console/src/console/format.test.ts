import { describe, expect, it } from "vitest";
import {
  currencyExponent,
  durationText,
  exactTime,
  localInputValue,
  money,
  relativeTime,
  shownTime,
  truncatedPrefix,
} from "./format.ts";

describe("relativeTime", () => {
  const now = new Date("2026-11-22T12:00:00Z");
  const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000).toISOString();

  it("says how long ago, in the unit a person would use", () => {
    expect(relativeTime(ago(5), now)).toBe("just now");
    expect(relativeTime(ago(44), now)).toBe("just now");
    expect(relativeTime(ago(50), now)).toBe("1 minute ago");
    expect(relativeTime(ago(3 * 60), now)).toBe("3 minutes ago");
    expect(relativeTime(ago(50 * 60), now)).toBe("50 minutes ago");
    expect(relativeTime(ago(55 * 60), now)).toBe("1 hour ago");
    expect(relativeTime(ago(5 * 3600), now)).toBe("5 hours ago");
    expect(relativeTime(ago(86_400), now)).toBe("yesterday");
    expect(relativeTime(ago(3 * 86_400), now)).toBe("3 days ago");
    expect(relativeTime(ago(14 * 86_400), now)).toBe("2 weeks ago");
    expect(relativeTime(ago(400 * 86_400), now)).toBe("last year");
  });

  it("speaks of the future too (an expiry)", () => {
    expect(relativeTime(ago(-10), now)).toBe("in a few seconds");
    expect(relativeTime(ago(-2 * 3600), now)).toBe("in 2 hours");
    expect(relativeTime(ago(-30 * 86_400), now)).toBe("next month");
  });
});

describe("exactTime", () => {
  it("is UTC to the second, and leaves what is not a date alone", () => {
    expect(exactTime("2026-11-21T10:19:44.123456Z")).toBe("2026-11-21 10:19:44 UTC");
    expect(exactTime("soon")).toBe("soon");
  });
});

describe("money", () => {
  it("shows minor units with the currency's own exponent, exactly", () => {
    expect(currencyExponent("USD")).toBe(2);
    expect(currencyExponent("JPY")).toBe(0);
    expect(currencyExponent("KWD")).toBe(3);
    expect(money(2500, "USD")).toBe("USD 25.00");
    expect(money(5, "EUR")).toBe("EUR 0.05");
    expect(money(123456789, "USD")).toBe("USD 1,234,567.89");
    expect(money(500, "JPY")).toBe("JPY 500");
    expect(money(1234, "KWD")).toBe("KWD 1.234");
    // No floating point on the way: 0.1 + 0.2 style errors cannot appear.
    expect(money(30, "USD")).toBe("USD 0.30");
    expect(money(900719925474099, "USD")).toBe("USD 9,007,199,254,740.99");
  });
});

describe("truncatedPrefix", () => {
  it("adds an ellipsis and nothing more of the secret", () => {
    expect(truncatedPrefix("key_test_4fQx")).toBe("key_test_4fQx…");
  });
});

describe("localInputValue", () => {
  it("gives a datetime-local value that reads back as the same instant, to the minute", () => {
    for (const iso of ["2026-12-31T23:59:00.000Z", "2027-01-01T00:00:00.000Z", "2026-03-29T01:30:00.000Z"]) {
      const value = localInputValue(iso);
      expect(value).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/);
      expect(new Date(value).toISOString()).toBe(iso);
    }
    // Seconds are dropped (the input shows minutes).
    expect(new Date(localInputValue("2026-12-31T23:59:42Z")).toISOString()).toBe("2026-12-31T23:59:00.000Z");
    expect(localInputValue("never")).toBe("");
  });
});

describe("shownTime", () => {
  // The sandbox clock three days ahead of the server's: an object made just now carries a time three
  // days after the server's (and the browser's) now.
  const server = new Date("2026-11-27T12:00:00Z");
  const sandboxNow = new Date(server.getTime() + 3 * 86_400_000);
  const madeJustNow = new Date(sandboxNow.getTime() - 60_000).toISOString();

  it("reads a sandbox object's time against the sandbox clock: never 'in 3 days'", () => {
    const shown = shownTime(madeJustNow, { now: sandboxNow, sandbox: true });
    expect(shown.text).toBe("1 minute ago");
    expect(shown.title).toBe("2026-11-30 11:59:00 UTC, sandbox time");
    // Against the server's clock the same time would be in the future: what the console said before.
    expect(shownTime(madeJustNow, { now: server, sandbox: false }).text).toBe("in 3 days");
  });

  it("shows the exact time, said to be sandbox time, when the sandbox's now is unknown", () => {
    const shown = shownTime(madeJustNow, { now: null, sandbox: true });
    expect(shown.text).toBe("2026-11-30 11:59:00 UTC");
    expect(shown.title).toMatch(/^Sandbox time: /);
  });

  it("keeps production's times relative to the server's clock, with the exact time on hover", () => {
    expect(shownTime("2026-11-27T11:00:00Z", { now: server, sandbox: false })).toEqual({
      text: "1 hour ago",
      title: "2026-11-27 11:00:00 UTC",
    });
  });
});

describe("durationText", () => {
  it("says how far a clock moved in the two largest units", () => {
    expect(durationText(86_400)).toBe("1 day");
    expect(durationText(2 * 86_400 + 3 * 3600 + 120)).toBe("2 days 3 hours");
    expect(durationText(3600 + 60)).toBe("1 hour 1 minute");
    expect(durationText(45 * 60)).toBe("45 minutes");
    expect(durationText(30)).toBe("30 seconds");
    expect(durationText(0)).toBe("none");
  });
});
