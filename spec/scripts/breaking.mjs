#!/usr/bin/env node
// The breaking-change gate for /v1 (spec/main.tsp: "additive changes only within v1"). Compares the
// last released document, spec/released/v1.json, with the one generated from spec/ now, and fails on
// any change that could break a client built against the release: a removed or renamed operation,
// response field or response enum value; a new required request field or parameter; a narrowed type
// (a stricter pattern, length or range, a removed request enum value, a changed type).
//
//   node scripts/breaking.mjs            check (npm run check:breaking; part of npm test)
//   node scripts/breaking.mjs --release  make the current document the released one (an intentional
//                                        release: commit it with its CHANGELOG entry)
//
// The comparison is api-smart-diff's (a maintained OpenAPI differ); on top of its classification one
// rule is stricter: removing an enum value from a response is breaking here, because a client that
// switches on a value it was promised stops working.
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { apiCompare } from "api-smart-diff";

const specDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const RELEASED = resolve(specDir, "released/v1.json");
export const CURRENT = resolve(specDir, "../generated/openapi/openapi.3.1.json");

/** Where in the document a diff is, readably: `POST /v1/charges response 201 body.failure_message`. */
function where(path) {
  const [root, p, method, ...rest] = path;
  if (root === "webhooks") return `webhook ${p} ${rest.join(".")}`;
  if (root !== "paths") return path.join(".");
  return `${String(method ?? "").toUpperCase()} ${p} ${rest.join(".")}`.trim();
}

/** The schema at `path` in `doc`, following `$ref`s on the way (the differ reports dereferenced paths). */
function at(doc, path) {
  const deref = (node) => {
    let n = node;
    for (let i = 0; n && typeof n.$ref === "string" && i < 20; i++) {
      n = n.$ref
        .replace(/^#\//, "")
        .split("/")
        .reduce((o, k) => o?.[k], doc);
    }
    return n;
  };
  let node = doc;
  for (const key of path) node = deref(node)?.[key];
  return deref(node);
}

/**
 * Narrowings that only state a rule the server already enforced (issue 34 item 5): a request they refuse
 * was already refused with a 400 naming the field, so no client that worked before breaks. Each entry
 * matches the differ's `<action> <where>` and says what the server did before; an entry that matches
 * nothing is reported, so the list is emptied at the next release (`--release`).
 */
export const STATED_RULES = [
  {
    match: /^add GET \S+ parameters\.\d+\.schema\.minLength$/,
    why: "an empty query value (cursors, `type`) was already a 400: `must not be empty: leave the parameter out instead`",
  },
  {
    // The differ reads `{$ref: EventType, minLength: 1}` as the open enum's branch removed; it is the same rule.
    match: /^remove GET \/v1\/events parameters\.\d+\.schema\.anyOf\.1$/,
    why: "GET /v1/events `type` gained minLength 1 (an empty `type` was already a 400)",
  },
  {
    match: /^add POST \/v1\/merchants requestBody\.content\.application\/json\.schema\.properties\.status\.type$/,
    why: "MerchantCreate.status lists `active` and `suspended` only: `closed` was already a 400 naming `status`",
  },
  {
    match:
      /^add POST \/v1\/payment_links requestBody\.content\.application\/json\.schema\.properties\.payment_methods\.uniqueItems$/,
    why: "a payment method listed twice was already a 400 naming `payment_methods`",
  },
  {
    // The differ reads `{type: string, maxLength: 45, anyOf: [{format: ipv4}, {format: ipv6}]}` as the
    // type and length moved into a first branch and a second branch added; it is the same string, now
    // said to be an address (a charge's `customer.ip` was already a 400 unless an IPv4 or IPv6 address).
    match:
      /^(add|remove) \S+ \S+ responses\.\d+\.\S+\.customer\.anyOf\.0\.properties\.ip\.anyOf\.(0\.type|0\.maxLength|1)$/,
    why: "`customer.ip` states the IPv4-or-IPv6 rule the server already enforced (anyOf of the ipv4 and ipv6 formats)",
  },
];

/**
 * New response enum values that a client built against the release never meets: value → why. Each
 * appears only behind something such a client cannot have done or seen.
 */
const GATED_VALUES = new Map([
  [
    "redirect_to_url",
    // NextAction.type: only with a charge `requires_action` (3-D Secure, docs/three-d-secure.md), a status
    // the release did not have (statuses are extensible, so such a client treats it as unknown); the
    // release documents `next_action` as what a `pending` charge's payer must do.
    "comes only with a charge requires_action",
  ],
  [
    "request_3ds",
    // FraudDecision: only when the environment's fraud settings set `request_3ds_threshold`, a field the
    // release did not have (default null: off), so only a newer client turns it on.
    "only after request_3ds_threshold is set",
  ],
]);

/**
 * The breaking changes between two documents: operations and webhooks only (component schemas count
 * through the operations that use them, so one change is reported where a client meets it).
 */
export function breakingChanges(before, after) {
  // Values of the extensible enums (x-extensible-enum: error codes, event types, statuses...), which the
  // contract says grow within v1: adding one is not a break, whatever a generic differ assumes.
  const extensible = new Set();
  for (const schema of Object.values(after.components?.schemas ?? {})) {
    if (schema["x-extensible-enum"] === true) for (const v of schema.anyOf?.[0]?.enum ?? []) extensible.add(v);
  }
  // Compared on copies: the differ resolves references in the documents it is given.
  const { diffs } = apiCompare(structuredClone(before), structuredClone(after));
  const breaking = [];
  for (const diff of diffs) {
    const path = diff.path ?? [];
    if (path[0] !== "paths" && path[0] !== "webhooks") continue;
    const inResponse = path.includes("responses");
    const isEnumValue = path.includes("enum");
    if (diff.action === "add" && isEnumValue && extensible.has(diff.after)) continue;
    if (diff.action === "add" && isEnumValue && GATED_VALUES.has(diff.after)) continue;
    // A new member of a discriminated union whose discriminator value is extensible (Event: new event
    // types appear within v1, with their own payloads): a client already meets types it does not know.
    if (diff.action === "add" && inResponse && path.at(-2) === "oneOf") {
      const union = at(after, path.slice(0, -2));
      const member = union?.oneOf?.[Number(path.at(-1))];
      const mapping = Object.entries(union?.discriminator?.mapping ?? {});
      const value = mapping.find(([, ref]) => ref === member?.$ref)?.[0];
      if (value !== undefined && extensible.has(value)) continue;
    }
    const removedEnumValue = diff.action === "remove" && inResponse && isEnumValue;
    if (diff.type === "breaking" || removedEnumValue) {
      breaking.push({ action: diff.action, where: where(path), before: diff.before, after: diff.after });
    }
  }
  return breaking;
}

function main() {
  if (process.argv.includes("--release")) {
    mkdirSync(dirname(RELEASED), { recursive: true });
    copyFileSync(CURRENT, RELEASED);
    console.log(`spec/released/v1.json is now the released /v1 document; add its CHANGELOG entry in the same commit.`);
    return;
  }
  const read = (file) => JSON.parse(readFileSync(file, "utf8"));
  const found = breakingChanges(read(RELEASED), read(CURRENT));
  const stated = (c) => STATED_RULES.find((rule) => rule.match.test(`${c.action} ${c.where}`));
  const changes = found.filter((c) => !stated(c));
  const unused = STATED_RULES.filter((rule) => !found.some((c) => rule.match.test(`${c.action} ${c.where}`)));
  if (unused.length > 0) {
    console.error(
      `STATED_RULES in spec/scripts/breaking.mjs lists narrowings the document no longer has against the release (remove them):\n${unused.map((r) => `  ${r.match}`).join("\n")}`,
    );
    process.exit(1);
  }
  const allowed = found.length - changes.length;
  if (allowed > 0) console.log(`${allowed} narrowing(s) that state a rule the server already enforced (STATED_RULES).`);
  if (changes.length === 0) {
    console.log("No breaking change against the released /v1 document (spec/released/v1.json).");
    return;
  }
  console.error(`${changes.length} breaking change(s) against the released /v1 document (spec/released/v1.json):`);
  for (const c of changes.slice(0, 50)) {
    console.error(`  ${c.action} ${c.where}${c.before !== undefined ? `: ${JSON.stringify(c.before)}` : ""}`);
  }
  if (changes.length > 50) console.error(`  ... and ${changes.length - 50} more`);
  console.error(
    "A /v1 client could break. Make the change additive (an optional field, a new operation or value), or, for a deliberate release, see docs/contributing.md 'Changing the API'.",
  );
  process.exit(1);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
