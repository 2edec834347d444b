import { isRecord } from "../../guards.ts";
import { holdsCardNumber } from "./card-number.ts";
import { holdsCredential } from "./credentials.ts";
import { DomainError, type FieldIssue } from "./errors.ts";

// Card numbers go only where a card number is asked for (spec/main.tsp, "Card numbers go only where a
// card number is asked for"): POST /v1/tokens `card` and the pay operation's card `number`, which the
// vault encrypts. Every free-text field of a request body (the contract marks them `x-free-text`, and
// the generated operation table lists them per operation as `freeText`) refuses a value that holds
// one, with 400 `card_number_in_text` naming the field, before anything of the request is stored.
// Secrets this API issues are refused the same way, with 400 `secret_in_text`. This file is the walk
// over a body; what counts as a card number in text is card-number.ts's and what counts as a secret
// credentials.ts's (one recogniser each, shared with the masker).

/** One value of a request body found at a free-text field, and the `param` that names it. */
interface FoundText {
  param: string;
  text: string;
  /** Whether the text is a key of the map at `param` (then `param` names the map). */
  isKey: boolean;
}

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
 * Refuses a request body that holds a card number or a secret in any of the operation's free-text
 * fields: throws a 400 `card_number_in_text` (or `secret_in_text`, when no field holds a card number)
 * whose `param` names the first such field and whose `errors` name every one. Nothing found is echoed,
 * not even masked: the caller knows what they sent.
 */
export function refuseCardNumbersInText(body: unknown, freeText: readonly string[]): void {
  const found: FoundText[] = [];
  for (const field of freeText) textsAt(body, segmentsOf(field), "", found);
  const cards: FieldIssue[] = [];
  const secrets: FieldIssue[] = [];
  for (const f of found) {
    if (holdsCardNumber(f.text)) {
      cards.push({
        param: f.param,
        message: f.isKey ? "has a key that looks like a card number" : "looks like it contains a card number",
      });
    } else if (holdsCredential(f.text)) {
      secrets.push({
        param: f.param,
        message: f.isKey ? "has a key that looks like a secret" : "looks like it contains a secret",
      });
    }
  }
  const [card] = cards;
  if (card) {
    throw new DomainError(
      "card_number_in_text",
      `${card.param} ${card.message} (a Luhn-valid run of 13 to 19 digits, whatever their script and separators). Card numbers are accepted only in a card number field (card of POST /v1/tokens), never in free text: remove it and send the request again. Nothing was stored.`,
      { param: card.param, errors: cards },
    );
  }
  const [secret] = secrets;
  if (secret) {
    throw new DomainError(
      "secret_in_text",
      `${secret.param} ${secret.message} issued by this API (a service-key secret, webhook signing secret, console session token or payment-page token). Secrets belong in the Authorization header only, never in free text: remove it, send the request again, and rotate the secret, since it was sent where it could be seen. Nothing was stored.`,
      { param: secret.param, errors: secrets },
    );
  }
}
