import { DomainError, type FieldIssue } from "../domain/kernel/errors.ts";
import type { FieldErrorCode } from "./validator-errors.ts";

// The shape a JSON request body may have, checked on its bytes before it is parsed, so that no request
// costs more CPU than a small multiple of its size (docs/api.md "Conventions"). Without it, the
// contract's validator (Ajv with allErrors) reported one finding per unknown field or bad array entry,
// each explained and masked: a 100 KB body of 8,000 unknown fields took seconds of CPU to refuse; and
// parsing alone costs tens of milliseconds for 100 KB of `[[[[…` or of one very wide object. No
// operation of the contract takes more than 50 fields in one object (a Metadata map,
// spec/common/metadata.tsp) or 32 entries in one array (a webhook endpoint's `enabled_events`), nor
// nests more than four deep: the bounds below are at least twice that, and refuse nothing a client can
// mean to send.

/** The bounds, each named in its refusal. */
export const BODY_BOUNDS = {
  /** Objects and arrays inside one another (the body itself is depth 1). */
  depth: 16,
  /** Entries of any one object (its fields) or array. */
  entries: 100,
  /** Entries of every object and array of the body together. */
  total: 1_000,
} as const;

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \
const COMMA = 0x2c; // ,

/** JSON's whitespace: space, tab, line feed, carriage return. */
const isSpace = (byte: number) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;

function refusal(param: string, code: FieldErrorCode, message: string, detail: string): DomainError {
  const errors: (FieldIssue & { code: FieldErrorCode })[] = [{ param, code, message }];
  return new DomainError("invalid_request", detail, { param, errors });
}

/** A field name as a message shows it: at most 60 characters. */
const shown = (name: string) => (name.length > 60 ? `${name.slice(0, 60)}…` : name);

/**
 * Refuses a JSON body (its raw bytes, from express.json's `verify`, before the parser runs) that nests
 * deeper than BODY_BOUNDS.depth, or holds more than BODY_BOUNDS.entries entries in one object or
 * array, or BODY_BOUNDS.total in all: throws the 400 (a DomainError, answered as it is by the error
 * middleware), naming the bound and, where one container breaks it, its place (`metadata`,
 * `payment_methods`). One pass over the bytes, which skips strings (a `{` inside one is text) and
 * remembers each open object's current field name by its offsets, so nothing is decoded unless
 * refused. Malformed JSON is left to the parser, which says where.
 */
export function refuseUnboundedJson(raw: Uint8Array): void {
  const max = BODY_BOUNDS.depth;
  // Per open container, by depth (1 = the body): whether it is an array, its entries so far, whether
  // the next string in it is a field name, and where its current field name lies in `raw`.
  const isArray: boolean[] = new Array(max + 1).fill(false);
  const entries: number[] = new Array(max + 1).fill(0);
  const expectName: boolean[] = new Array(max + 1).fill(false);
  const nameStart: number[] = new Array(max + 1).fill(-1);
  const nameEnd: number[] = new Array(max + 1).fill(-1);
  let depth = 0;
  let total = 0;
  let stringStart = -1;
  let stringIsName = false;

  /** The place of the container open at `upTo`, as `param` names fields: `metadata`, `items.3`. */
  const placeOf = (upTo: number): string => {
    const parts: string[] = [];
    for (let d = 1; d < upTo; d++) {
      if (isArray[d]) parts.push(String(Math.max(0, (entries[d] ?? 0) - 1)));
      else {
        let name = "";
        try {
          name = JSON.parse(Buffer.from(raw.subarray(nameStart[d], (nameEnd[d] ?? -1) + 1)).toString("utf8"));
        } catch {
          name = "?";
        }
        parts.push(shown(name));
      }
    }
    return parts.join(".") || "body";
  };

  /** One more entry in the container open at `depth`. */
  const entry = () => {
    if (depth === 0) return;
    const count = (entries[depth] ?? 0) + 1;
    entries[depth] = count;
    if (++total > BODY_BOUNDS.total) {
      throw refusal(
        "body",
        "too_long",
        `must hold at most ${BODY_BOUNDS.total} fields and array entries in all`,
        `The request body holds more than ${BODY_BOUNDS.total} fields and array entries in all, which no operation takes.`,
      );
    }
    if (count > BODY_BOUNDS.entries) {
      const param = placeOf(depth);
      const what = isArray[depth] ? "entries" : "fields";
      throw refusal(
        param,
        "too_long",
        `must have at most ${BODY_BOUNDS.entries} ${what} (no operation takes more)`,
        `\`${param}\` has more than ${BODY_BOUNDS.entries} ${what}: a request body's objects and arrays hold at most ${BODY_BOUNDS.entries} entries, and no operation takes more.`,
      );
    }
  };
  /** Whether the container open at `depth` still waits for its first entry. */
  const empty: boolean[] = new Array(max + 1).fill(true);
  const startValue = () => {
    if (depth > 0 && empty[depth]) {
      empty[depth] = false;
      entry();
    }
  };

  for (let i = 0; i < raw.length; i++) {
    // cast: i < raw.length, so a byte, never undefined; on the one loop over every byte, no check for what cannot be.
    const byte = raw[i] as number;
    if (stringStart >= 0) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) {
        if (stringIsName) {
          nameStart[depth] = stringStart;
          nameEnd[depth] = i;
        }
        stringStart = -1;
      }
      continue;
    }
    if (isSpace(byte)) continue;
    if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      if (depth > 0) depth--;
      continue;
    }
    if (byte === COMMA) {
      if (depth > 0) {
        entry();
        expectName[depth] = !isArray[depth];
      }
      continue;
    }
    startValue();
    if (byte === QUOTE) {
      stringStart = i;
      stringIsName = depth > 0 && expectName[depth] === true;
      if (stringIsName) expectName[depth] = false;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (++depth > max) {
        throw refusal(
          "body",
          "invalid_value",
          `must not nest objects and arrays more than ${max} deep`,
          `The request body nests objects and arrays more than ${max} deep, which no operation takes.`,
        );
      }
      isArray[depth] = byte === OPEN_ARRAY;
      entries[depth] = 0;
      empty[depth] = true;
      expectName[depth] = byte === OPEN_OBJECT;
    }
    // Anything else (a colon, a number, true, false, null) needs nothing more.
  }
}
