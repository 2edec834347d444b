import type { components } from "@payments/contract/types";
import { looksLikeCardNumber } from "../domain/kernel/card-number.ts";
import type { OpenApiDocument } from "./contract.ts";

// The one translation from express-openapi-validator's findings to the `errors[]` of a 400 problem
// (ProblemDetail in spec/common/problems.tsp; docs/api.md "Errors"). The validator reports Ajv's words
// for every branch it tried ("must NOT be valid", "must match pattern "^[A-Z]{3}$"", nine hints for a
// union), so each finding is read again against the contract's own schema for the field it names:
//   - an unknown field is named with the nearest field the object does take ("did you mean");
//   - a pattern says in words what it expects: the schema's `x-pattern-message` (every pattern a request
//     can meet has one: spec/scripts/generate.mjs refuses a document without), and its example;
//   - a union with a `type` (a charge's `payment_method`, a cashout's `destination`) is reported only for
//     the branch its `type` selects, or, without a usable `type`, once, naming the types there are;
//   - a card number where a token belongs says to tokenize the card first (POST /v1/tokens).
// Every item carries the field (`param`) and a machine code (FieldErrorCode). A finding the contract
// cannot explain is kept in the validator's words rather than dropped.

export type FieldErrorCode = components["schemas"]["FieldErrorCode"];
export type FieldError = components["schemas"]["ProblemDetail"];

/** One finding as express-openapi-validator reports it (its HttpError's `errors[]`). */
export interface ValidatorFinding {
  path?: string;
  message?: string;
  errorCode?: string;
}

/**
 * At most this many of the validator's findings are read, and this many items listed in `errors[]`:
 * what a person fixes in one go, and a bound on the work and the size of a refusal whatever was sent
 * (body-bounds.ts bounds what the validator finds). A problem that lists fewer than it found says so
 * (errors.ts).
 */
export const FINDINGS_READ = 200;
export const FINDINGS_LISTED = 50;

/** What the request sent, where the findings point. */
export interface RequestParts {
  /** The operation's method (lower case) and its path template in the contract (`/v1/merchants/{id}`). */
  method: string;
  route: string;
  body: unknown;
  query: Record<string, unknown>;
  params: Record<string, unknown>;
  headers: Record<string, unknown>;
}

type Schema = Record<string, unknown>;

/** A field's schema as the request met it: the schemas that apply to it (allOf and a union's chosen branch). */
interface Located {
  nodes: Schema[];
  value: unknown;
  /** A union with a `type` that the value does not select a branch of (no object, no or an unknown `type`). */
  union?: { types: string[]; tokenBranch: boolean };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Codes whose message names its field itself; every other message reads after the field's name. */
const STANDALONE = new Set<FieldErrorCode>(["unknown_field"]);

/** The order in which one field's several findings are worth reading: the first is kept. */
const PRIORITY: FieldErrorCode[] = [
  "token_required",
  "unknown_field",
  "missing",
  "invalid_type",
  "invalid_value",
  "invalid_format",
  "too_short",
  "too_long",
  "too_small",
  "too_large",
  "not_unique",
];

/** A card number sent where a token's id belongs. */
const TOKEN_MESSAGE =
  "must be a token's id (`tok_…`), never a card number: tokenize the card first with POST /v1/tokens and send the token's `id` here";

/** What a JSON Schema `type` is, in words. */
const TYPE_WORDS: Record<string, string> = {
  string: "a string",
  integer: "a whole number",
  number: "a number",
  boolean: "`true` or `false`",
  object: "an object",
  array: "an array",
  null: "`null`",
};

/** What a `format` expects, in words, where the schema has no `x-pattern-message` of its own. */
const FORMAT_WORDS: Record<string, string> = {
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
function carriesCardNumber(value: unknown, depth = 0): boolean {
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
    let diagonal = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j] as number;
      row[j] = Math.min(above + 1, (row[j - 1] as number) + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length] as number;
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
const shownName = (name: string) => (name.length > 60 ? `${name.slice(0, 60)}…` : name);

/** `a`, `a` or `b`, `a`, `b` or `c`: values as code, for a message. */
function orList(values: readonly unknown[]): string {
  const shown = values.map((v) => `\`${typeof v === "string" ? v : JSON.stringify(v)}\``);
  if (shown.length <= 1) return shown.join("");
  return `${shown.slice(0, -1).join(", ")} or ${shown[shown.length - 1]}`;
}

function andList(values: readonly string[]): string {
  const shown = values.map((v) => `\`${v}\``);
  if (shown.length <= 1) return shown.join("");
  return `${shown.slice(0, -1).join(", ")} and ${shown[shown.length - 1]}`;
}

/** The JSON type of a value, as a Schema `type` names it. */
function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** `/body/payment_method/token` → ["body", "payment_method", "token"] (JSON Pointer, unescaped). */
function pointer(path: string): string[] {
  return path
    .split("/")
    .filter((s) => s !== "")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** The header's usual spelling: `idempotency-key` → `Idempotency-Key`. */
const headerName = (name: string) => name.replace(/(^|-)([a-z])/g, (_, d: string, c: string) => d + c.toUpperCase());

/**
 * Explains the validator's findings on one request against the contract. `doc` is the contract as
 * loaded (loadContract), not the copy the validator was given, which it rewrites.
 */
export function explainFindings(
  doc: OpenApiDocument,
  request: RequestParts,
  findings: ValidatorFinding[],
): FieldError[] {
  const schemas = (doc.components.schemas ?? {}) as Record<string, Schema>;
  const operation = doc.paths[request.route]?.[request.method] as Schema | undefined;

  const deref = (node: unknown): Schema | undefined => {
    let n = node;
    for (let i = 0; isObject(n) && typeof n.$ref === "string" && i < 20; i++) {
      n = schemas[(n.$ref as string).split("/").pop() ?? ""];
    }
    return isObject(n) ? n : undefined;
  };

  /** A schema with its allOf members (each resolved), outermost first. */
  const expand = (node: unknown, out: Schema[] = []): Schema[] => {
    const n = deref(node);
    if (!n) return out;
    out.push(n);
    for (const member of (n.allOf as unknown[] | undefined) ?? []) expand(member, out);
    return out;
  };

  const keyword = (nodes: Schema[], name: string): unknown => nodes.find((n) => n[name] !== undefined)?.[name];

  /** The values of a union branch's `type` property, when it has one. */
  const typeValues = (nodes: Schema[]): string[] | undefined => {
    for (const n of nodes) {
      const property = expand((n.properties as Record<string, unknown> | undefined)?.type);
      const values = (keyword(property, "enum") as unknown[] | undefined) ?? keyword(property, "const");
      if (Array.isArray(values)) return values.map(String);
      if (typeof values === "string") return [values];
    }
    return undefined;
  };

  const isTokenId = (nodes: Schema[]) => String(keyword(nodes, "pattern") ?? "").startsWith("^tok_");

  /** Where a token goes in a schema (`payment_method.token`), if it takes one. */
  const tokenPath = (node: unknown, prefix: string, depth = 0): string | undefined => {
    if (depth > 6) return undefined;
    for (const n of expand(node)) {
      for (const [name, property] of Object.entries((n.properties as Record<string, unknown> | undefined) ?? {})) {
        const path = prefix ? `${prefix}.${name}` : name;
        if (isTokenId(expand(property))) return path;
        const inner = tokenPath(property, path, depth + 1);
        if (inner) return inner;
      }
      for (const branch of (n.anyOf as unknown[] | undefined) ?? []) {
        const inner = tokenPath(branch, prefix, depth + 1);
        if (inner) return inner;
      }
    }
    return undefined;
  };

  /** The schemas that apply to a value: allOf members, and the branch of a union that the value selects. */
  const resolve = (node: unknown, value: unknown): Located => {
    const nodes = expand(node);
    const located: Located = { nodes, value };
    for (const n of [...nodes]) {
      const alternatives = (n.anyOf as unknown[] | undefined)?.map((a) => expand(a));
      if (!alternatives) continue;
      const nonNull = alternatives.filter((a) => keyword(a, "type") !== "null");
      const tagged = nonNull.map(typeValues);
      if (nonNull.length > 1 && tagged.every((t) => t !== undefined)) {
        const chosen = isObject(value) ? nonNull.find((_, i) => tagged[i]?.includes(String(value.type))) : undefined;
        if (chosen) nodes.push(...chosen);
        else {
          const tokenBranch = nonNull.some((branch) => branch.some((b) => tokenPath(b, "") !== undefined));
          located.union = { types: tagged.flat() as string[], tokenBranch };
        }
      } else {
        // Nullable (`X | null`) or an open enum (known values, or any string): every alternative applies.
        for (const a of nonNull) nodes.push(...a);
      }
    }
    return located;
  };

  /** The schema of one field of an object (a property, or the object's additionalProperties). */
  const child = (parent: Located, key: string): Located | undefined => {
    const value =
      isObject(parent.value) || Array.isArray(parent.value)
        ? (parent.value as Record<string, unknown>)[key]
        : undefined;
    for (const n of parent.nodes) {
      const property = (n.properties as Record<string, unknown> | undefined)?.[key];
      if (property !== undefined) return resolve(property, value);
    }
    for (const n of parent.nodes) {
      if (isObject(n.additionalProperties)) return resolve(n.additionalProperties, value);
      if (Array.isArray(parent.value) && n.items !== undefined) return resolve(n.items, value);
    }
    return undefined;
  };

  /** The property names an object takes. */
  const propertyNames = (located: Located): string[] => [
    ...new Set(located.nodes.flatMap((n) => Object.keys((n.properties as Record<string, unknown> | undefined) ?? {}))),
  ];

  const parameters = ((operation?.parameters as unknown[] | undefined) ?? []).map((p) => {
    const param =
      isObject(p) && typeof p.$ref === "string"
        ? (doc.components.parameters as Record<string, Schema>)?.[p.$ref.split("/").pop() ?? ""]
        : p;
    return (param ?? {}) as Schema;
  });
  const bodySchema = (((operation?.requestBody as Schema | undefined)?.content as Record<string, Schema> | undefined)?.[
    "application/json"
  ]?.schema ?? undefined) as unknown;

  /** The root a finding's path starts from: the body, or one parameter. */
  const root = (where: string, name: string | undefined): { located: Located; param: string } | undefined => {
    if (where === "body") return { located: resolve(bodySchema, request.body), param: "" };
    const location = where === "params" || where === "path" ? "path" : where === "headers" ? "header" : where;
    const source = location === "path" ? request.params : location === "header" ? request.headers : request.query;
    const spec = parameters.find(
      (p) => p.in === location && typeof p.name === "string" && p.name.toLowerCase() === (name ?? "").toLowerCase(),
    );
    if (!spec || name === undefined) return undefined;
    const value = source[location === "header" ? name.toLowerCase() : name];
    return {
      located: resolve(spec.schema, value),
      param: location === "header" ? headerName(spec.name as string) : name,
    };
  };

  // Where a token goes in the body (a charge's `payment_method.token`), looked up once per request.
  let tokenPathMemo: { path: string | undefined } | undefined;
  const bodyTokenPath = () => {
    tokenPathMemo ??= { path: tokenPath(bodySchema, "") };
    return tokenPathMemo.path;
  };

  const issues: FieldError[] = [];
  const add = (param: string, code: FieldErrorCode, message: string) =>
    issues.push({ param: param || "body", code, message });

  /** A union without a usable `type`: one finding for it, whatever the validator said of each branch. */
  const unionIssue = (param: string, at: Located) => {
    const union = at.union as NonNullable<Located["union"]>;
    const typeParam = param ? `${param}.type` : "type";
    const types = orList(union.types);
    if (union.tokenBranch && carriesCardNumber(at.value)) {
      const token = bodyTokenPath() ?? "token";
      add(
        param,
        "token_required",
        `must be an object such as {"type": "card", "token": "tok_…"}, never a card number: tokenize the card first with POST /v1/tokens and send the token's \`id\` as \`${token}\``,
      );
    } else if (!isObject(at.value)) {
      add(param, "invalid_type", `must be an object with a \`type\`: ${types}`);
    } else if (at.value.type === undefined) {
      add(typeParam, "missing", `is required: one of ${types}`);
    } else {
      const meant = nearestName(String(at.value.type), union.types);
      add(typeParam, "invalid_value", `must be one of ${types}${meant ? `; did you mean \`${meant}\`?` : ""}`);
    }
  };

  for (const finding of findings) {
    const path = pointer(finding.path ?? "");
    const [where = "", ...rest] = path;
    const keywordName = finding.errorCode?.replace(/\.openapi\.validation$/, "");
    const message = finding.message ?? "is invalid";

    // Query parameters the operation does not take: the validator's own check, with no Ajv keyword.
    if (where === "query" && /^Unknown query parameter/.test(message)) {
      const name = rest.join(".");
      const known = parameters.filter((p) => p.in === "query").map((p) => String(p.name));
      const nearest = nearestName(name, known);
      add(
        name,
        "unknown_field",
        `unknown query parameter \`${shownName(name)}\`; ${
          nearest
            ? `did you mean \`${nearest}\`?`
            : known.length > 0
              ? `this operation takes ${andList(known)}`
              : "this operation takes none"
        }`,
      );
      continue;
    }
    if (where === "query" && /^Empty value found/.test(message)) {
      add(rest.join("."), "invalid_value", "must not be empty: leave the parameter out instead");
      continue;
    }

    const start = root(where, where === "body" ? undefined : rest[0]);
    if (!start) {
      add(rest.join(".") || where, "invalid_value", message);
      continue;
    }
    const segments = where === "body" ? rest : rest.slice(1);
    const fieldOf = (upTo: number) => [start.param, ...segments.slice(0, upTo)].filter(Boolean).join(".");

    // Walk to the field (to the object holding it, for a missing or unknown field), stopping at a union
    // that the value does not resolve: such a union is reported once, as a whole.
    const onParent = ["required", "not", "unevaluatedProperties", "additionalProperties"].includes(keywordName ?? "");
    const walkTo = onParent ? segments.length - 1 : segments.length;
    let at: Located | undefined = start.located;
    let depth = 0;
    while (at && !at.union && depth < walkTo) at = child(at, segments[depth++] as string);
    if (!at) continue; // inside something the contract does not describe: its own finding names it
    if (at.union) {
      unionIssue(fieldOf(depth), at);
      continue;
    }
    const param = fieldOf(walkTo);

    switch (keywordName) {
      case "required": {
        const required = at.nodes.flatMap((n) => (n.required as string[] | undefined) ?? []);
        if (required.includes(segments[segments.length - 1] as string))
          add(fieldOf(segments.length), "missing", "is required");
        break;
      }
      case "not":
      case "unevaluatedProperties":
      case "additionalProperties": {
        const name = segments[segments.length - 1] as string;
        const known = propertyNames(at);
        if (known.includes(name)) break; // another branch's finding: this branch takes the field
        const field = fieldOf(segments.length);
        const value = isObject(at.value) ? at.value[name] : undefined;
        const token = bodyTokenPath();
        if (token && carriesCardNumber(value)) {
          add(
            field,
            "token_required",
            `looks like a card number, which this request never takes: tokenize the card first with POST /v1/tokens and send the token's \`id\` as \`${token}\``,
          );
          break;
        }
        // The names not sent yet (asked of the object, not listed from it: one finding per unknown
        // field would otherwise cost the object's size each).
        const sent = at.value;
        const nearest = nearestName(
          name,
          known.filter((k) => !(isObject(sent) && Object.hasOwn(sent, k))),
        );
        const prefix = param ? `${param}.` : "";
        add(
          field,
          "unknown_field",
          `unknown field \`${shownName(field)}\`; ${
            nearest
              ? `did you mean \`${prefix}${nearest}\`?`
              : `${param ? `\`${param}\`` : "this request"} takes ${known.length > 0 ? andList(known) : "no fields"}`
          }`,
        );
        break;
      }
      case "type": {
        const expected = keyword(at.nodes, "type");
        const types = (Array.isArray(expected) ? expected : [expected]).filter(
          (t): t is string => typeof t === "string",
        );
        if (types.length === 0) break;
        const actual = jsonType(at.value);
        if (types.includes(actual) || (actual === "integer" && types.includes("number"))) break;
        const nullable = at.nodes.some((n) =>
          (n.anyOf as unknown[] | undefined)?.some((a) => deref(a)?.type === "null"),
        );
        const words = types.map((t) => TYPE_WORDS[t] ?? t);
        if (nullable && !types.includes("null")) words.push("`null`");
        // A number sent as a string in a JSON body (query values are always text).
        const quoted =
          where === "body" &&
          (types.includes("integer") || types.includes("number")) &&
          typeof at.value === "string" &&
          /^-?[0-9]+(\.[0-9]+)?$/.test(at.value.trim());
        if (isTokenId(at.nodes) && looksLikeCardNumber(at.value)) {
          add(param, "token_required", TOKEN_MESSAGE);
        } else {
          add(param, "invalid_type", `must be ${words.join(" or ")}${quoted ? ", written without quotes" : ""}`);
        }
        break;
      }
      case "enum":
      case "const": {
        const allowed = (keyword(at.nodes, "enum") as unknown[] | undefined) ?? [keyword(at.nodes, "const")];
        if (allowed.some((v) => JSON.stringify(v) === JSON.stringify(at.value))) break;
        const meant =
          typeof at.value === "string"
            ? nearestName(
                at.value,
                allowed.filter((v): v is string => typeof v === "string"),
              )
            : undefined;
        const hint = meant ? `; did you mean \`${meant}\`?` : "";
        add(param, "invalid_value", `must be ${allowed.length > 1 ? "one of " : ""}${orList(allowed)}${hint}`);
        break;
      }
      case "pattern": {
        const pattern = keyword(at.nodes, "pattern");
        if (typeof pattern !== "string" || typeof at.value !== "string") break;
        if (new RegExp(pattern, "u").test(at.value)) break;
        if (isTokenId(at.nodes) && looksLikeCardNumber(at.value)) {
          add(param, "token_required", TOKEN_MESSAGE);
          break;
        }
        add(param, "invalid_format", `must be ${expected(at.nodes) ?? "in the form the API reference gives for it"}`);
        break;
      }
      case "format": {
        const format = String(keyword(at.nodes, "format") ?? "");
        // A whole number out of its format's range, where the schema gives a range of its own (a clock
        // advance's `seconds`: 1 to 31622400): the `minimum`/`maximum` finding says the range that applies.
        const ranged = keyword(at.nodes, "minimum") !== undefined || keyword(at.nodes, "maximum") !== undefined;
        if ((format === "int32" || format === "int64") && ranged && Number.isInteger(at.value)) break;
        add(param, "invalid_format", `must be ${expected(at.nodes) ?? FORMAT_WORDS[format] ?? `a valid ${format}`}`);
        break;
      }
      case "minimum":
      case "exclusiveMinimum": {
        const limit = keyword(at.nodes, keywordName);
        add(param, "too_small", `must be ${keywordName === "minimum" ? "at least" : "more than"} ${limit}`);
        break;
      }
      case "maximum":
      case "exclusiveMaximum": {
        const limit = keyword(at.nodes, keywordName);
        add(param, "too_large", `must be ${keywordName === "maximum" ? "at most" : "less than"} ${limit}`);
        break;
      }
      case "minLength": {
        const limit = Number(keyword(at.nodes, "minLength"));
        add(param, "too_short", limit <= 1 ? "must not be empty" : `must be at least ${limit} characters long`);
        break;
      }
      case "maxLength":
        add(param, "too_long", `must be at most ${keyword(at.nodes, "maxLength")} characters long`);
        break;
      case "minItems":
      case "minProperties": {
        if (keywordName === "minProperties" && exactlyOneOf(param, at)) break;
        const limit = Number(keyword(at.nodes, keywordName));
        const unit = keywordName === "minItems" ? "entries" : "keys";
        add(param, "too_short", limit <= 1 ? "must not be empty" : `must have at least ${limit} ${unit}`);
        break;
      }
      case "maxItems":
      case "maxProperties": {
        if (keywordName === "maxProperties" && exactlyOneOf(param, at)) break;
        const unit = keywordName === "maxItems" ? "entries" : "keys";
        add(param, "too_long", `must have at most ${keyword(at.nodes, keywordName)} ${unit}`);
        break;
      }
      case "uniqueItems":
        add(param, "not_unique", "must not list the same value twice");
        break;
      case "propertyNames": {
        const rule = expand(keyword(at.nodes, "propertyNames"));
        const bad = Object.keys(isObject(at.value) ? at.value : {})
          .filter((key) => !nameAllowed(rule, key))
          .map(shownName);
        const what = expected(rule) ?? "a key the API reference allows";
        add(
          param,
          "invalid_format",
          bad.length > 0
            ? `has ${bad.length === 1 ? "a key" : "keys"} it cannot take (${andList(bad)}): each key must be ${what}`
            : `has a key it cannot take: each key must be ${what}`,
        );
        break;
      }
      case "anyOf":
      case "oneOf":
        // A union its value resolved, or a nullable field: the chosen branch's own findings say what is wrong.
        break;
      default:
        add(param, "invalid_value", message);
    }
  }
  return tidy(issues, bodyTokenPath());

  /**
   * An object that takes exactly one of its fields (`minProperties` and `maxProperties` 1 on a sealed
   * schema: SandboxClockAdvanceRequest's `seconds` or `to`), said by naming them rather than counting keys.
   */
  function exactlyOneOf(param: string, at: Located): boolean {
    if (keyword(at.nodes, "minProperties") !== 1 || keyword(at.nodes, "maxProperties") !== 1) return false;
    const names = Object.keys((keyword(at.nodes, "properties") as Record<string, unknown> | undefined) ?? {});
    if (names.length < 2) return false;
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

  /** The words a schema gives for its form (`x-pattern-message`), with its example when it has one. */
  function expected(nodes: Schema[]): string | undefined {
    const words = keyword(nodes, "x-pattern-message");
    if (typeof words !== "string") return undefined;
    const examples = keyword(nodes, "examples");
    const example = Array.isArray(examples) && typeof examples[0] === "string" ? examples[0] : undefined;
    return example && !words.includes("such as") ? `${words}, such as \`${example}\`` : words;
  }
}

/** Whether a key passes a `propertyNames` schema (the Metadata key rule: length and pattern). */
function nameAllowed(rule: Schema[], key: string): boolean {
  for (const n of rule) {
    if (typeof n.minLength === "number" && [...key].length < n.minLength) return false;
    if (typeof n.maxLength === "number" && [...key].length > n.maxLength) return false;
    if (typeof n.pattern === "string" && !new RegExp(n.pattern, "u").test(key)) return false;
  }
  return true;
}

/**
 * One finding per field (the most useful of several: a wrong type before the pattern it then also
 * fails), no `missing` token beside the card number sent instead of it, and the findings a person
 * should read first first.
 */
function tidy(issues: FieldError[], token: string | undefined): FieldError[] {
  const rank = (code: FieldErrorCode) => {
    const i = PRIORITY.indexOf(code);
    return i === -1 ? PRIORITY.length : i;
  };
  const best = new Map<string, FieldError>();
  for (const issue of issues) {
    const kept = best.get(issue.param);
    if (!kept || rank(issue.code) < rank(kept.code)) best.set(issue.param, issue);
  }
  const cardSent = [...best.values()].some((i) => i.code === "token_required");
  return [...best.values()]
    .filter((i) => !(cardSent && i.code === "missing" && i.param === token))
    .map((issue, index) => ({ issue, index }))
    .sort((a, b) => Math.min(rank(a.issue.code), 3) - Math.min(rank(b.issue.code), 3) || a.index - b.index)
    .map(({ issue }) => issue);
}

/** The problem's `detail`: every finding as a sentence, each naming its field. */
export function findingsDetail(issues: readonly FieldError[]): string {
  return issues
    .map((issue) => {
      const text = STANDALONE.has(issue.code) ? issue.message : `\`${issue.param}\` ${issue.message}`;
      const capitalised = text.charAt(0).toUpperCase() + text.slice(1);
      return /[.?!]$/.test(capitalised) ? capitalised : `${capitalised}.`;
    })
    .join(" ");
}
