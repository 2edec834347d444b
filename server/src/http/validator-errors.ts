import type { components } from "@payments/contract/types";
import { child, type Located, type OperationHints, operationHints, resolve } from "./validator/hints.ts";
import { EXPLAIN, type FieldErrorCode, ON_PARENT } from "./validator/messages.ts";
import {
  andList,
  carriesCardNumber,
  headerName,
  isObject,
  nearestName,
  orList,
  pointer,
  shownName,
} from "./validator/words.ts";

// The one translation from express-openapi-validator's findings to the `errors[]` of a 400 problem
// (ProblemDetail in spec/common/problems.tsp; docs/api.md "Errors"). The validator reports Ajv's words
// for every branch it tried ("must NOT be valid", "must match pattern "^[A-Z]{3}$"", nine hints for a
// union), so each finding is read again against what the contract says of the field it names:
//   - an unknown field is named with the nearest field the object does take ("did you mean");
//   - a pattern says in words what it expects: the schema's `x-pattern-message` (every pattern a request
//     can meet has one: spec/scripts/generate.mjs refuses a document without), and its example;
//   - a union with a `type` (a charge's `payment_method`, a cashout's `destination`) is reported only for
//     the branch its `type` selects, or, without a usable `type`, once, naming the types there are;
//   - a card number where a token belongs says to tokenize the card first (POST /v1/tokens).
// Every item carries the field (`param`) and a machine code (FieldErrorCode). A finding the contract
// cannot explain is kept in the validator's words rather than dropped.
//
// This file walks each finding to its field; validator/hints.ts reads, on the way, what the contract says
// of each place (generated from it at `npm run generate`: no schema is walked at run time),
// validator/messages.ts holds one row per keyword saying what to write, and validator/words.ts the words
// they share.

export type { FieldErrorCode };
export { nearestName };
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

/** What one request's findings are read against, and where their items go. */
interface Reading {
  request: RequestParts;
  operation: OperationHints;
  tokenPath: () => string | undefined;
  add: (param: string, code: FieldErrorCode, message: string) => void;
}

/** Explains the validator's findings on one request against the contract (its generated hints). */
export function explainFindings(request: RequestParts, findings: ValidatorFinding[]): FieldError[] {
  const operation = operationHints(request.method, request.route);
  // Where a token goes in the body (a charge's `payment_method.token`).
  const tokenPath = () => operation.tokenPath;
  const issues: FieldError[] = [];
  const add = (param: string, code: FieldErrorCode, message: string) =>
    issues.push({ param: param || "body", code, message });
  const reading: Reading = { request, operation, tokenPath, add };
  for (const finding of findings) explainOne(reading, finding);
  return tidy(issues, tokenPath());
}

/** One finding: walked to the field it names, then said in the words its keyword's row gives (EXPLAIN). */
function explainOne(reading: Reading, finding: ValidatorFinding): void {
  const { add } = reading;
  const [where = "", ...rest] = pointer(finding.path ?? "");
  const keywordName = finding.errorCode?.replace(/\.openapi\.validation$/, "") ?? "";
  const message = finding.message ?? "is invalid";
  if (where === "query" && queryFinding(reading, rest.join("."), message)) return;

  const start = root(reading, where, where === "body" ? undefined : rest[0]);
  if (!start) {
    add(rest.join(".") || where, "invalid_value", message);
    return;
  }
  const segments = where === "body" ? rest : rest.slice(1);
  const fieldOf = (upTo: number) => [start.param, ...segments.slice(0, upTo)].filter(Boolean).join(".");

  // Walk to the field (to the object holding it, for a missing or unknown field), stopping at a union
  // that the value does not resolve: such a union is reported once, as a whole.
  const walkTo = ON_PARENT.has(keywordName) ? segments.length - 1 : segments.length;
  let at: Located | undefined = start.located;
  let depth = 0;
  while (at && !at.union && depth < walkTo) at = child(at, segments[depth++] ?? "");
  if (!at) return; // inside something the contract does not describe: its own finding names it
  if (at.union) {
    unionIssue(reading, fieldOf(depth), at, at.union);
    return;
  }
  const param = fieldOf(walkTo);
  const explain = EXPLAIN[keywordName];
  if (!explain) {
    add(param, "invalid_value", message);
    return;
  }
  explain({
    at,
    param,
    field: fieldOf(segments.length),
    name: segments[segments.length - 1] ?? "",
    where,
    keyword: keywordName,
    message,
    tokenPath: reading.tokenPath,
    add,
  });
}

/** The validator's own checks of the query (no Ajv keyword): a parameter the operation does not take, or an empty one. */
function queryFinding({ operation, add }: Reading, name: string, message: string): boolean {
  if (/^Unknown query parameter/.test(message)) {
    const known = operation.parameters.filter((p) => p.in === "query").map((p) => p.name);
    const nearest = nearestName(name, known);
    const takes = known.length > 0 ? `this operation takes ${andList(known)}` : "this operation takes none";
    add(
      name,
      "unknown_field",
      `unknown query parameter \`${shownName(name)}\`; ${nearest ? `did you mean \`${nearest}\`?` : takes}`,
    );
    return true;
  }
  if (/^Empty value found/.test(message)) {
    add(name, "invalid_value", "must not be empty: leave the parameter out instead");
    return true;
  }
  return false;
}

/** The root a finding's path starts from: the body, or one parameter. */
function root(
  { request, operation }: Reading,
  where: string,
  name: string | undefined,
): { located: Located; param: string } | undefined {
  if (where === "body") return { located: resolve(operation.body, request.body), param: "" };
  const location = where === "params" || where === "path" ? "path" : where === "headers" ? "header" : where;
  const source = location === "path" ? request.params : location === "header" ? request.headers : request.query;
  const spec = operation.parameters.find(
    (p) => p.in === location && p.name.toLowerCase() === (name ?? "").toLowerCase(),
  );
  if (!spec || name === undefined) return undefined;
  const value = source[location === "header" ? name.toLowerCase() : name];
  return {
    located: resolve(spec.hint, value),
    param: location === "header" ? headerName(spec.name) : name,
  };
}

/** A union without a usable `type`: one finding for it, whatever the validator said of each branch. */
function unionIssue(
  { add, tokenPath }: Reading,
  param: string,
  at: Located,
  union: NonNullable<Located["union"]>,
): void {
  const typeParam = param ? `${param}.type` : "type";
  const types = orList(union.types);
  if (union.tokenBranch && carriesCardNumber(at.value)) {
    const token = tokenPath() ?? "token";
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
