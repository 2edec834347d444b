import type { components } from "@payments/contract/types";
import { looksLikeCardNumber } from "../../domain/kernel/card-number.ts";
import { type HintLimits, type Located, nameAllowed, propertyNames } from "./hints.ts";
import {
  andList,
  carriesCardNumber,
  FORMAT_WORDS,
  isObject,
  jsonType,
  nearestName,
  orList,
  shownName,
  TOKEN_MESSAGE,
  TYPE_WORDS,
} from "./words.ts";

// One row per JSON Schema keyword the validator reports: what to say about a field that fails it, in
// the contract's words (http/validator-errors.ts walks each finding to its field first), read from the
// field's hint (validator/hints.ts: generated with the contract). A row may say nothing: the finding
// belongs to another branch of a union, or another finding on the field says it.

export type FieldErrorCode = components["schemas"]["FieldErrorCode"];

/** One finding, walked to its field. */
export interface Finding {
  /** The field's hint and value; for a keyword of ON_PARENT, the object holding the field. */
  at: Located;
  /** The field's name in a message (`payment_method.token`); for ON_PARENT, the holding object's. */
  param: string;
  /** The named field itself (for ON_PARENT, the missing or unknown one), and its last segment. */
  field: string;
  name: string;
  /** Where the finding is: `body`, `query`, `path` (`params`) or `headers`. */
  where: string;
  keyword: string;
  /** The validator's own words, kept when the contract cannot explain the finding. */
  message: string;
  /** Where a token goes in this request's body, if it takes one (a charge's `payment_method.token`). */
  tokenPath: () => string | undefined;
  add: (param: string, code: FieldErrorCode, message: string) => void;
}

/** Keywords reported on the object holding the field they name (a missing or an unknown field). */
export const ON_PARENT: ReadonlySet<string> = new Set([
  "required",
  "not",
  "unevaluatedProperties",
  "additionalProperties",
]);

type Explain = (f: Finding) => void;

const missing: Explain = ({ at, name, field, add }) => {
  if (at.hint.required?.includes(name)) add(field, "missing", "is required");
};

const unknownField: Explain = ({ at, name, field, param, tokenPath, add }) => {
  const known = propertyNames(at.hint);
  if (known.includes(name)) return; // another branch's finding: this branch takes the field
  const sent = at.value;
  const token = tokenPath();
  if (token && carriesCardNumber(isObject(sent) ? sent[name] : undefined)) {
    add(
      field,
      "token_required",
      `looks like a card number, which this request never takes: tokenize the card first with POST /v1/tokens and send the token's \`id\` as \`${token}\``,
    );
    return;
  }
  // The names not sent yet (asked of the object, not listed from it: one finding per unknown field
  // would otherwise cost the object's size each).
  const nearest = nearestName(
    name,
    known.filter((k) => !(isObject(sent) && Object.hasOwn(sent, k))),
  );
  const prefix = param ? `${param}.` : "";
  const takes = `${param ? `\`${param}\`` : "this request"} takes ${known.length > 0 ? andList(known) : "no fields"}`;
  add(
    field,
    "unknown_field",
    `unknown field \`${shownName(field)}\`; ${nearest ? `did you mean \`${prefix}${nearest}\`?` : takes}`,
  );
};

const wrongType: Explain = ({ at, param, where, add }) => {
  const types = at.hint.types ?? [];
  if (types.length === 0) return;
  const actual = jsonType(at.value);
  if (types.includes(actual) || (actual === "integer" && types.includes("number"))) return;
  const words = types.map((t) => TYPE_WORDS[t] ?? t);
  if (at.hint.nullable && !types.includes("null")) words.push("`null`");
  // A number sent as a string in a JSON body (query values are always text).
  const quoted =
    where === "body" &&
    (types.includes("integer") || types.includes("number")) &&
    typeof at.value === "string" &&
    /^-?[0-9]+(\.[0-9]+)?$/.test(at.value.trim());
  if (at.hint.tokenId && looksLikeCardNumber(at.value)) add(param, "token_required", TOKEN_MESSAGE);
  else add(param, "invalid_type", `must be ${words.join(" or ")}${quoted ? ", written without quotes" : ""}`);
};

const notAllowed: Explain = ({ at, param, add }) => {
  // A finding on a field with neither `enum` nor `const` (none in the contract) names an undefined value, as it always has.
  const allowed = at.hint.allowed ?? [undefined];
  if (allowed.some((v) => JSON.stringify(v) === JSON.stringify(at.value))) return;
  const meant =
    typeof at.value === "string"
      ? nearestName(
          at.value,
          allowed.filter((v): v is string => typeof v === "string"),
        )
      : undefined;
  const hint = meant ? `; did you mean \`${meant}\`?` : "";
  add(param, "invalid_value", `must be ${allowed.length > 1 ? "one of " : ""}${orList(allowed)}${hint}`);
};

const badPattern: Explain = ({ at, param, add }) => {
  const pattern = at.hint.pattern;
  if (pattern === undefined || typeof at.value !== "string") return;
  if (new RegExp(pattern, "u").test(at.value)) return;
  if (at.hint.tokenId && looksLikeCardNumber(at.value)) add(param, "token_required", TOKEN_MESSAGE);
  else add(param, "invalid_format", `must be ${at.hint.expected ?? "in the form the API reference gives for it"}`);
};

const badFormat: Explain = ({ at, param, add }) => {
  const format = at.hint.format ?? "";
  // A whole number out of its format's range, where the schema gives a range of its own (a clock
  // advance's `seconds`: 1 to 31622400): the `minimum`/`maximum` finding says the range that applies.
  const ranged = at.hint.limits?.minimum !== undefined || at.hint.limits?.maximum !== undefined;
  if ((format === "int32" || format === "int64") && ranged && Number.isInteger(at.value)) return;
  add(param, "invalid_format", `must be ${at.hint.expected ?? FORMAT_WORDS[format] ?? `a valid ${format}`}`);
};

/** A keyword's number, as a message quotes it. */
const limit = (at: Located, name: keyof HintLimits): number | undefined => at.hint.limits?.[name];

/** `minimum`, `exclusiveMinimum`, `maximum`, `exclusiveMaximum`: the bound, in words. */
const outOfRange =
  (code: FieldErrorCode, words: string, name: keyof HintLimits): Explain =>
  ({ at, param, add }) =>
    add(param, code, `must be ${words} ${limit(at, name)}`);

/**
 * An object that takes exactly one of its fields (`minProperties` and `maxProperties` 1 on a sealed
 * schema: SandboxClockAdvanceRequest's `seconds` or `to`), said by naming them rather than counting keys.
 */
function exactlyOneOf({ at, param, add }: Finding): boolean {
  const names = at.hint.exactlyOneOf;
  if (!names) return false;
  const prefix = param && param !== "body" ? `${param}.` : "";
  const sent = names.filter((name) => isObject(at.value) && at.value[name] !== undefined);
  const [first = "", ...others] = sent.length > 1 ? sent : names;
  if (sent.length > 1) {
    add(`${prefix}${first}`, "invalid_value", `and ${andList(others)} cannot both be sent: send exactly one of them`);
  } else {
    add(`${prefix}${first}`, "missing", `or ${orList(others)} is required: send exactly one of them`);
  }
  return true;
}

/** `minItems` and `minProperties`. */
const tooFew: Explain = (f) => {
  if (f.keyword === "minProperties" && exactlyOneOf(f)) return;
  const least = Number(limit(f.at, f.keyword === "minItems" ? "minItems" : "minProperties"));
  const unit = f.keyword === "minItems" ? "entries" : "keys";
  f.add(f.param, "too_short", least <= 1 ? "must not be empty" : `must have at least ${least} ${unit}`);
};

/** `maxItems` and `maxProperties`. */
const tooMany: Explain = (f) => {
  if (f.keyword === "maxProperties" && exactlyOneOf(f)) return;
  const unit = f.keyword === "maxItems" ? "entries" : "keys";
  f.add(
    f.param,
    "too_long",
    `must have at most ${limit(f.at, f.keyword === "maxItems" ? "maxItems" : "maxProperties")} ${unit}`,
  );
};

const badKeys: Explain = ({ at, param, add }) => {
  const rule = at.hint.keys;
  const bad = Object.keys(isObject(at.value) ? at.value : {})
    .filter((key) => !nameAllowed(rule, key))
    .map(shownName);
  const what = rule?.expected ?? "a key the API reference allows";
  add(
    param,
    "invalid_format",
    bad.length > 0
      ? `has ${bad.length === 1 ? "a key" : "keys"} it cannot take (${andList(bad)}): each key must be ${what}`
      : `has a key it cannot take: each key must be ${what}`,
  );
};

/** What each keyword's finding says; a keyword not listed keeps the validator's words (`invalid_value`). */
export const EXPLAIN: Readonly<Record<string, Explain>> = {
  required: missing,
  not: unknownField,
  unevaluatedProperties: unknownField,
  additionalProperties: unknownField,
  type: wrongType,
  enum: notAllowed,
  const: notAllowed,
  pattern: badPattern,
  format: badFormat,
  minimum: outOfRange("too_small", "at least", "minimum"),
  exclusiveMinimum: outOfRange("too_small", "more than", "exclusiveMinimum"),
  maximum: outOfRange("too_large", "at most", "maximum"),
  exclusiveMaximum: outOfRange("too_large", "less than", "exclusiveMaximum"),
  minLength: ({ at, param, add }) => {
    const least = Number(limit(at, "minLength"));
    add(param, "too_short", least <= 1 ? "must not be empty" : `must be at least ${least} characters long`);
  },
  maxLength: ({ at, param, add }) =>
    add(param, "too_long", `must be at most ${limit(at, "maxLength")} characters long`),
  minItems: tooFew,
  minProperties: tooFew,
  maxItems: tooMany,
  maxProperties: tooMany,
  uniqueItems: ({ param, add }) => add(param, "not_unique", "must not list the same value twice"),
  propertyNames: badKeys,
  // A union its value resolved, or a nullable field: the chosen branch's own findings say what is wrong.
  anyOf: () => {},
  oneOf: () => {},
};
