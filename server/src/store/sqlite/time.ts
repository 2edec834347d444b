// Timestamps as the SQLite store keeps them in its columns (issue 36, bytes per charge): `created_at`,
// and each indexed field a collection declares a timestamp (CollectionSpec.timestamps), as an INTEGER of
// microseconds since the epoch — 8 bytes in the row and in every index entry that carries it — instead of
// the 27 characters of their text (`2026-11-28T11:07:05.002002Z`, domain/kernel/time.ts). A captured
// charge's rows and index entries carried created_at about 30 times.
//
// Microseconds, because that is the text's precision: the integer gives the text back exactly and orders
// as the text does, so the listing order (created_at, id), a cursor and a created range stay exact. It
// stays a safe integer (2^53) up to the year 2255. A timestamp written in another form the store accepts
// (fewer decimals: `2024-01-01T00:00:00.000Z`, what Date#toISOString gives) orders by its instant, and
// its document keeps its text as written, so it reads back unchanged (schema.ts, encode); a string that
// is no timestamp is refused.

/** What the store accepts as a timestamp: RFC 3339 in UTC, to the microsecond at most. */
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?Z$/;

/**
 * The last text microsOf read, and its answer: a change's rows carry the same timestamps many times (a
 * captured charge's created_at goes into ~30 rows and index entries in one transaction), and reading one
 * (a regular expression, a Date, its ISO text to check the fields) was 3.6 % of the main thread at
 * saturation (`npm run bench:profile -- built-live-charges`, issue 36). microsOf is pure: a repeat gets
 * the same answer.
 */
let last: { text: string; micros: number | undefined } = { text: "", micros: undefined };

/** The instant `text` names, in microseconds since the epoch; undefined when it is no timestamp. */
export function microsOf(text: string): number | undefined {
  if (text === last.text) return last.micros;
  const micros = readMicros(text);
  last = { text, micros };
  return micros;
}

function readMicros(text: string): number | undefined {
  const parts = TIMESTAMP.exec(text);
  if (parts === null) return undefined;
  const [, year, month, day, hour, minute, second, fraction = ""] = parts;
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC, which reads the years 0 to 99 as 1900 to 1999.
  date.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  date.setUTCHours(Number(hour), Number(minute), Number(second), 0);
  // A field out of range (February 30th, 25 o'clock) rolls over into another instant: not a timestamp.
  if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 19) !== text.slice(0, 19)) return undefined;
  const micros = date.getTime() * 1000 + Number(fraction.padEnd(6, "0"));
  return Number.isSafeInteger(micros) ? micros : undefined;
}

/** The timestamp in the stored format (domain/kernel/time.ts) of `micros` since the epoch. */
export function timestampOf(micros: number): string {
  const ms = Math.floor(micros / 1000);
  return `${new Date(ms).toISOString().slice(0, -1)}${String(micros - ms * 1000).padStart(3, "0")}Z`;
}

/** A timestamp's column value (microseconds); a TypeError naming the field for anything else. */
export function timeColumn(field: string, value: unknown): number {
  const micros = typeof value === "string" ? microsOf(value) : undefined;
  if (micros === undefined)
    throw new TypeError(
      `${field} must be a timestamp in UTC such as 2026-11-28T11:07:05.002002Z (at most 6 decimals), not ${JSON.stringify(value)}`,
    );
  return micros;
}

/**
 * Whether the column alone gives `value` back (timestampOf), so the document need not keep it: a
 * timestamp in the stored format. (Of the strings microsOf reads, those of 27 characters are exactly
 * those: six decimals, and every field checked in range.)
 */
export function isStoredForm(value: unknown): boolean {
  return typeof value === "string" && value.length === 27 && microsOf(value) !== undefined;
}
