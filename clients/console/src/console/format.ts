// Formatting for people: relative times ("3 minutes ago"), exact times, money in minor units.
// Pure functions of their inputs (the clock is a parameter), unit-tested in format.test.ts.

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 365 * 86_400],
  ["month", 30 * 86_400],
  ["week", 7 * 86_400],
  ["day", 86_400],
  ["hour", 3_600],
  ["minute", 60],
];

const relative = new Intl.RelativeTimeFormat("en", { numeric: "auto" });

/** "just now", "3 minutes ago", "in 2 hours", "yesterday"…: how long from `now` to `iso`. */
export function relativeTime(iso: string, now: Date): string {
  const seconds = (Date.parse(iso) - now.getTime()) / 1000;
  const abs = Math.abs(seconds);
  if (abs < 45) return seconds <= 0 ? "just now" : "in a few seconds";
  for (const [unit, size] of UNITS) {
    // A unit is used from 0.9 of it on (45 s shows as a minute ago, 54 min as an hour).
    if (abs >= size * 0.9 || unit === "minute") {
      return relative.format(Math.round(seconds / size) || Math.sign(seconds), unit);
    }
  }
  return relative.format(Math.round(seconds / 60), "minute");
}

/**
 * The clock a time is read against: `now` is that clock's time now, null when the console cannot know
 * it (a sandbox key without scope `*` may not read the sandbox clock); `sandbox` when it is the sandbox
 * clock, which runs ahead of the server's by its offset (spec/resources/sandbox-clock.tsp SandboxClock).
 */
export interface TimeFrame {
  now: Date | null;
  sandbox: boolean;
}

/**
 * A time as a person reads it, and its hover text: relative to its own clock's now ("3 minutes ago",
 * even after the sandbox clock moved days ahead), or, when that now is unknown, the exact time, so an
 * object made on an advanced sandbox clock is never said to be made "in 3 days".
 */
export function shownTime(iso: string, frame: TimeFrame): { text: string; title: string } {
  if (frame.now === null) {
    return {
      text: exactTime(iso),
      title: "Sandbox time: the sandbox clock can run ahead of the real time (only a key with scope * may read it)",
    };
  }
  return {
    text: relativeTime(iso, frame.now),
    title: frame.sandbox ? `${exactTime(iso)}, sandbox time` : exactTime(iso),
  };
}

/** How far a clock moved, or runs ahead, in words: `2 days`, `1 day 3 hours`, `45 minutes`, `none`. */
export function durationText(seconds: number): string {
  const units: [string, number][] = [
    ["day", 86_400],
    ["hour", 3_600],
    ["minute", 60],
  ];
  const parts: string[] = [];
  let left = Math.max(0, Math.floor(seconds));
  for (const [unit, size] of units) {
    const n = Math.floor(left / size);
    left -= n * size;
    if (n > 0) parts.push(`${n} ${unit}${n === 1 ? "" : "s"}`);
  }
  if (parts.length === 0) return left > 0 ? `${left} second${left === 1 ? "" : "s"}` : "none";
  return parts.slice(0, 2).join(" ");
}

/** The exact time, in UTC, unambiguous: `2026-11-21 10:19:44 UTC`. */
export function exactTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** Digits after the decimal point of a currency (ISO 4217 exponent, as the browser knows it). */
export function currencyExponent(currency: string): number {
  try {
    return new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

/** An amount in minor units, for display: 2500 USD → "$25.00"; 500 JPY → "¥500"; 1234 KWD → "KWD 1.234". */
export function money(amount: number, currency: string): string {
  const digits = currencyExponent(currency);
  // Exact: the integer part and the fraction are cut from the integer, never computed in floating point.
  const sign = amount < 0 ? "-" : "";
  const abs = Math.abs(Math.trunc(amount));
  const major = Math.floor(abs / 10 ** digits);
  const minor = digits > 0 ? String(abs % 10 ** digits).padStart(digits, "0") : "";
  const grouped = major.toLocaleString("en");
  return `${sign}${currency.toUpperCase()} ${grouped}${digits > 0 ? `.${minor}` : ""}`;
}

/**
 * An instant as a `datetime-local` input's value, in the browser's time zone (`2026-12-31T23:59`); the
 * input gives back local time, which `new Date(value)` reads as such.
 */
export function localInputValue(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A key prefix as listings show it: the prefix and an ellipsis, never more of the secret. */
export const truncatedPrefix = (prefix: string) => `${prefix}…`;
