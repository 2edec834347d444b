import { looksLikeCardNumber } from "../../domain/kernel/card-number.ts";
import { isRecord } from "../../guards.ts";

// The words the validator's messages are made of (http/validator-errors.ts): what a type or format is,
// lists of values, names as a message repeats them, and "did you mean".

/** A JSON object (server/src/guards.ts, isRecord), under the name the validator's modules read it by. */
export const isObject = isRecord;

/** A card number sent where a token's id belongs. */
export const TOKEN_MESSAGE =
  "must be a token's id (`tok_…`), never a card number: tokenize the card first with POST /v1/tokens and send the token's `id` here";

/** What a JSON Schema `type` is, in words. */
export const TYPE_WORDS: Record<string, string> = {
  string: "a string",
  integer: "a whole number",
  number: "a number",
  boolean: "`true` or `false`",
  object: "an object",
  array: "an array",
  null: "`null`",
};

/** What a `format` expects, in words, where the schema has no `x-pattern-message` of its own. */
export const FORMAT_WORDS: Record<string, string> = {
  email: "an e-mail address, such as `ada@example.com`",
  "date-time": "a date and time in RFC 3339 form with its offset, such as `2026-12-31T23:59:59Z`",
  date: "a date in RFC 3339 form, such as `2026-12-31`",
  uri: "an absolute address with its scheme, such as `https://example.com/webhooks`",
  url: "an absolute address with its scheme, such as `https://example.com/webhooks`",
  int32: "a whole number from -2147483648 to 2147483647",
  int64: "a whole number",
  ipv4: "an IPv4 address, such as `203.0.113.7`",
  ipv6: "an IPv6 address, such as `2001:db8::7`",
  uuid: "a UUID, such as `3f2c1e9a-7b4d-4c8e-9a1f-2b3c4d5e6f70`",
};

/**
 * Whether a card number is anywhere in a value (a field, or the fields of an object sent in its place):
 * what a card number looks like is the kernel's one rule (domain/kernel/card-number.ts).
 */
export function carriesCardNumber(value: unknown, depth = 0): boolean {
  if (looksLikeCardNumber(value)) return true;
  if (depth > 4) return false;
  if (Array.isArray(value)) return value.some((v) => carriesCardNumber(v, depth + 1));
  if (isObject(value)) return Object.values(value).some((v) => carriesCardNumber(v, depth + 1));
  return false;
}

/** Levenshtein distance, for "did you mean". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j] ?? 0;
      row[j] = Math.min(above + 1, (row[j - 1] ?? 0) + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length] ?? 0;
}

/**
 * The known name a mistyped one most likely meant: the same letters without case or separators
 * (`merchantId` for `merchant_id`), or one within a third of its length in edits (`nme` for `name`).
 */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  // A name far longer than every known one is within a third of its length of none of them: no
  // distance to compute (each costs the product of the lengths, and a request can send 100 KB names).
  const longest = known.reduce((n, k) => Math.max(n, k.length), 0);
  if (name.length > 2 * longest + 3) return undefined;
  const plain = (s: string) => s.toLowerCase().replace(/[-_ ]/g, "");
  const same = known.find((k) => plain(k) === plain(name));
  if (same) return same;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const d = distance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  const allowed = Math.max(1, Math.floor(Math.max(name.length, best?.length ?? 0) / 3));
  return bestDistance <= allowed ? best : undefined;
}

/** A name the request sent, as a message repeats it: at most 60 characters, so a refusal stays small. */
export const shownName = (name: string) => (name.length > 60 ? `${name.slice(0, 60)}…` : name);

/** `a`, `a` or `b`, `a`, `b` or `c`: values as code, for a message. */
export function orList(values: readonly unknown[]): string {
  const shown = values.map((v) => `\`${typeof v === "string" ? v : JSON.stringify(v)}\``);
  if (shown.length <= 1) return shown.join("");
  return `${shown.slice(0, -1).join(", ")} or ${shown[shown.length - 1]}`;
}

export function andList(values: readonly string[]): string {
  const shown = values.map((v) => `\`${v}\``);
  if (shown.length <= 1) return shown.join("");
  return `${shown.slice(0, -1).join(", ")} and ${shown[shown.length - 1]}`;
}

/** The JSON type of a value, as a Schema `type` names it. */
export function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** `/body/payment_method/token` → ["body", "payment_method", "token"] (JSON Pointer, unescaped). */
export function pointer(path: string): string[] {
  return path
    .split("/")
    .filter((s) => s !== "")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** The header's usual spelling: `idempotency-key` → `Idempotency-Key`. */
export const headerName = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_, d: string, c: string) => d + c.toUpperCase());
