import { DomainError, type FieldIssue } from "./errors.ts";
import { escapeAt, SEPARATOR } from "./mask.ts";

// Card numbers go only where a card number is asked for (spec/main.tsp, "Card numbers go only where a
// card number is asked for"): POST /v1/tokens `card` and the pay operation's card `number`, which the
// vault encrypts. Every free-text field of a request body (the contract marks them `x-free-text`, and
// the generated operation table lists them per operation as `freeText`) refuses a value that holds
// one, with 400 `card_number_in_text` naming the field, before anything of the request is stored.
// This file is the rule's one home: what counts as a card number in text, and the walk over a body.

/** The shortest and longest card numbers issued (ISO/IEC 7812: 13 to 19 digits for the card brands). */
const MIN_DIGITS = 13;
const MAX_DIGITS = 19;

/** The Luhn (mod 10) check digit test; false for anything that is not a non-empty string of digits. */
export function luhnValid(digits: string): boolean {
  if (!/^[0-9]+$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/**
 * A run of at least MIN_DIGITS digits with at most three separators between any two (the separators
 * the masker knows: white space, `-`, `.`, `_`, `,`, `/`, `+`, raw or percent-encoded): how a person
 * writes a card number (`4242 4242 4242 4242`, `4242-4242-4242-4242`), and the only kind of run that
 * can hold one.
 */
const RUN = new RegExp(`[0-9](?:${SEPARATOR}{0,3}[0-9]){${MIN_DIGITS - 1},}`, "g");

/** A run's digit groups: the digits between its separators, percent escapes skipped. */
function groupsOf(run: string): string[] {
  const groups: string[] = [];
  let current = "";
  for (let i = 0; i < run.length; i++) {
    const escaped = escapeAt(run, i);
    const ch = run[i] as string;
    if (escaped === 0 && ch >= "0" && ch <= "9") {
      current += ch;
      continue;
    }
    if (current !== "") groups.push(current);
    current = "";
    if (escaped > 0) i += escaped - 1;
  }
  if (current !== "") groups.push(current);
  return groups;
}

/**
 * Whether the text holds a card number: consecutive digit groups of a run (written together, or apart
 * with up to three separators between groups) that make 13 to 19 digits and pass the Luhn check.
 * Groups are taken whole, so a card number written next to another number is found
 * (`order 12, card 4242 4242 4242 4242`), while digits are never borrowed from the middle of a group:
 * one group of more than 19 digits (a long reference) is not a card number. What is not found: a
 * number that fails Luhn (nine in ten random numbers, most phone numbers), fewer than 13 digits (dates,
 * times, amounts, most phone numbers), or digits separated by letters or by more than three separators.
 */
export function holdsCardNumber(text: string): boolean {
  for (const [run] of text.matchAll(RUN)) {
    const groups = groupsOf(run);
    for (let first = 0; first < groups.length; first++) {
      let digits = "";
      for (let last = first; last < groups.length; last++) {
        digits += groups[last];
        if (digits.length > MAX_DIGITS) break;
        if (digits.length >= MIN_DIGITS && luhnValid(digits)) return true;
      }
    }
  }
  return false;
}

/** One value of a request body found at a free-text field, and the `param` that names it. */
interface FoundText {
  param: string;
  text: string;
  /** Whether the text is a key of the map at `param` (then `param` names the map). */
  isKey: boolean;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The strings a body holds at one free-text field of the operation table (`a.b`, `map.*` for every
 * value, `map.{key}` for every key, `list[]` for every item), with the dotted `param` naming each
 * (`metadata.note`, `items.2`), as problems name fields.
 */
function textsAt(value: unknown, segments: readonly string[], param: string, out: FoundText[]): void {
  if (segments.length === 0) {
    if (typeof value === "string") out.push({ param, text: value, isKey: false });
    return;
  }
  const [segment = "", ...rest] = segments;
  const join = (name: string) => (param === "" ? name : `${param}.${name}`);
  if (segment === "{key}") {
    if (isRecord(value)) for (const key of Object.keys(value)) out.push({ param, text: key, isKey: true });
    return;
  }
  if (segment === "*") {
    if (isRecord(value)) for (const [key, item] of Object.entries(value)) textsAt(item, rest, join(key), out);
    return;
  }
  const list = segment.endsWith("[]");
  const name = list ? segment.slice(0, -2) : segment;
  const child = name === "" ? value : isRecord(value) ? value[name] : undefined;
  const at = name === "" ? param : join(name);
  if (!list) {
    textsAt(child, rest, at, out);
  } else if (Array.isArray(child)) {
    for (const [i, item] of child.entries()) textsAt(item, rest, `${at}.${i}`, out);
  }
}

/** `a.b[]` → `a`, `b[]`; `metadata.{key}` → `metadata`, `{key}`. */
const segmentsOf = (field: string) => field.split(".");

/**
 * Refuses a request body that holds a card number in any of the operation's free-text fields: throws a
 * 400 `card_number_in_text` whose `param` names the first such field and whose `errors` name every one.
 * The number is not echoed, not even masked: the caller knows what they sent.
 */
export function refuseCardNumbersInText(body: unknown, freeText: readonly string[]): void {
  const found: FoundText[] = [];
  for (const field of freeText) textsAt(body, segmentsOf(field), "", found);
  const issues: FieldIssue[] = found
    .filter((f) => holdsCardNumber(f.text))
    .map((f) => ({
      param: f.param,
      message: f.isKey ? "has a key that looks like a card number" : "looks like it contains a card number",
    }));
  const [first] = issues;
  if (!first) return;
  throw new DomainError(
    "card_number_in_text",
    `${first.param} ${first.message} (a Luhn-valid run of 13 to 19 digits). Card numbers are accepted only in a card number field (card of POST /v1/tokens), never in free text: remove it and send the request again. Nothing was stored.`,
    { param: first.param, errors: issues },
  );
}
