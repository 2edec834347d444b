// The dredd hooks of the contract suite (test/contract/dredd.test.ts). dredd loads hook files with
// `require`, which cannot load TypeScript here (Node 20, vitest does not hook `require`), so the
// hook file it is given, ./dredd-hooks.cjs, only hands dredd's hooks object to `registerContractHooks`
// below through a global the test sets for the length of one run.
//
// What the hooks do, and why:
// - dredd 14 compiles one transaction per documented response and sends the same request for each
//   (apiaryio/dredd#1281), so it cannot produce a 401, 403, 409, 413 or 500. Only the
//   2xx transactions and, for operations that address an object by id, the 404 ones are kept; the rest
//   are skipped, each with its reason recorded.
// - Every request gets `Authorization: Bearer <sandbox key with scope *>`, except those to public
//   operations (`security: []`), which are sent without a key.
// - Path ids: a 2xx transaction addresses a fixture the test created beforehand; a 404 transaction a
//   well-formed id that exists nowhere.
// - Request bodies: dredd uses the first request example of an operation (the happy path) for every
//   transaction, including those of the other success examples (createCharge's `card_blocked`). Each
//   transaction gets the request example whose name pairs with its response's example (TypeSpec @opExample names
//   both halves of one example); a 404 transaction, whose response example has no request half, gets
//   the 2xx response's request example, so that only the id is wrong. Ids in a request example
//   (createCharge's `merchant_id` and `payment_method.token`) name objects that exist nowhere; each
//   id-shaped string in the body is replaced by the fixture of its prefix (`mch`, `tok`), and a body
//   naming an id of a prefix without a fixture fails the transaction instead of drawing a 404. Fields
//   no example can hold (the public pay operation's page token, issued by the page at run time) are
//   set from `bodyFields`.
// - dredd sends the optional `Idempotency-Key` header with an empty value (which the contract rightly
//   refuses); POSTs get a fresh key instead. The event stream's optional `Last-Event-ID` and every
//   POST's optional `Sandbox-Simulate` are left out.
// - Response checks dredd cannot do: it treats every documented response header as required (its
//   OpenAPI 3 parser drops the Header Object's `required`), it rejects `application/json;
//   charset=utf-8` (dredd#1391), and it does not validate bodies against the schema (dredd#1281). The
//   hooks drop optional headers from dredd's expectations, strip the charset parameter before dredd
//   compares content types, and check status, content type, required headers and body against the
//   canonical 3.1 document with Ajv (test/support/openapi.ts) in place of dredd's body comparison.

import { randomInt, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { OPERATIONS, type OperationId } from "@payments/contract/operations";
import type { DreddHooks, DreddTransaction } from "dredd";
import type { Contract } from "../support/openapi.ts";

/** The global through which ./dredd-hooks.cjs finds `registerContractHooks` for the current run. */
export const HOOKS_GLOBAL = Symbol.for("@payments/tests:contract:dredd-hooks");

/** The 3.0 document dredd reads (path parameters carry a singular `example`, dredd#2173). */
export const OPENAPI_30_PATH = createRequire(import.meta.url).resolve("@payments/contract/openapi.3.0.json");

type Operation = (typeof OPERATIONS)[number];

interface Example {
  value?: unknown;
}
interface MediaType30 {
  examples?: Record<string, Example>;
}
interface Parameter30 {
  name?: string;
  in?: string;
  example?: unknown;
}
interface Response30 {
  headers?: Record<string, { required?: boolean }>;
  content?: Record<string, MediaType30>;
}
interface Operation30 {
  operationId: string;
  parameters?: Parameter30[];
  requestBody?: { content?: Record<string, MediaType30> };
  responses: Record<string, Response30>;
}
export interface OpenApi30 {
  paths: Record<string, Record<string, Operation30>>;
}

export function loadOpenApi30(): OpenApi30 {
  return JSON.parse(readFileSync(OPENAPI_30_PATH, "utf8")) as OpenApi30;
}

/** Why a transaction was not run. */
export interface Skipped {
  transaction: string;
  reason: string;
}

export interface ContractHooksContext {
  /** A sandbox key with scope `*`. */
  secret: string;
  /** The id each path-parameter operation addresses in its 2xx transaction. */
  fixtures: Partial<Record<OperationId, string>>;
  /** The id that replaces every example id of this prefix (`mch`, `tok`, ...) in a request body. */
  bodyIds: Partial<Record<string, string>>;
  /** Top-level body fields set per operation over its example (values only known at run time). */
  bodyFields?: Partial<Record<OperationId, Record<string, unknown>>>;
  /** The canonical contract, for the response checks. */
  contract: Contract;
  /** The document dredd reads. */
  document: OpenApi30;
  /** Filled by the hooks. */
  skipped: Skipped[];
  /** Set when dredd handed the hooks object over (a hook file that fails to load is only a warning in dredd). */
  registered: boolean;
}

/** Whether the suite runs a transaction for this documented status (see the header comment). */
export function isRunnable(op: Pick<Operation, "path">, status: number): boolean {
  return (status >= 200 && status < 300) || (status === 404 && op.path.includes("{"));
}

let summaries: Map<Operation, string | undefined> | undefined;

/**
 * The operation a transaction exercises. dredd names the action after the operation's `summary` when
 * it has one (`/healthz > Liveness probe > 200`) and by its method otherwise; the method is read from
 * the request when there is one, and the summary is matched too.
 */
export function operationOf(transaction: {
  origin: Pick<DreddTransaction["origin"], "resourceName" | "actionName">;
  request?: Pick<DreddTransaction["request"], "method"> | undefined;
}): Operation | undefined {
  const { resourceName, actionName } = transaction.origin;
  const method = transaction.request?.method?.toLowerCase();
  if (summaries === undefined) {
    const document = loadOpenApi30();
    summaries = new Map(
      OPERATIONS.map((op) => [op, (document.paths[op.path]?.[op.method] as { summary?: string } | undefined)?.summary]),
    );
  }
  return OPERATIONS.find(
    (op) =>
      op.path === resourceName &&
      (method !== undefined
        ? op.method === method
        : op.method === actionName.toLowerCase() || summaries?.get(op) === actionName),
  );
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/**
 * An id of the shape spec/common/ids.tsp fixes (prefix, `_`, 24 base62 characters) that no store holds. The
 * server's id module is not part of its package exports, so this draws the same way.
 */
export function unusedId(prefix: string): string {
  let suffix = "";
  for (let i = 0; i < 24; i++) suffix += BASE62[randomInt(62)];
  return `${prefix}_${suffix}`;
}

/** An id of the shape spec/common/ids.tsp fixes; group 1 is its prefix. */
const ID_SHAPE = /^([a-z]+)_[0-9A-Za-z]{24}$/;

/**
 * A copy of `value` with every id-shaped string replaced by the id `ids` holds for its prefix; the
 * ids of a prefix without one are left as they are and pushed onto `missing`.
 */
export function withFixtureIds(value: unknown, ids: Partial<Record<string, string>>, missing: string[]): unknown {
  if (typeof value === "string") {
    const prefix = ID_SHAPE.exec(value)?.[1];
    if (prefix === undefined) return value;
    const id = ids[prefix];
    if (id === undefined) missing.push(value);
    return id ?? value;
  }
  if (Array.isArray(value)) return value.map((item) => withFixtureIds(item, ids, missing));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withFixtureIds(item, ids, missing)]));
  }
  return value;
}

function header(headers: Record<string, string>, name: string): string | undefined {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : headers[key];
}

function deleteHeader(headers: Record<string, string>, name: string): void {
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name.toLowerCase()) delete headers[key];
}

export function registerContractHooks(hooks: DreddHooks, ctx: ContractHooksContext): void {
  ctx.registered = true;

  function fail(transaction: DreddTransaction, reason: string): void {
    transaction.fail = reason;
  }

  function documented(op: Operation): Operation30 {
    const found = ctx.document.paths[op.path]?.[op.method];
    if (!found) throw new Error(`${op.operationId} is in OPERATIONS but not in the 3.0 document`);
    return found;
  }

  /** The request example paired with this response (see the header comment), or undefined if none pairs. */
  function requestExample(doc: Operation30, status: string): unknown {
    const requestExamples = doc.requestBody?.content?.["application/json"]?.examples ?? {};
    const names = (code: string) =>
      Object.values(doc.responses[code]?.content ?? {}).flatMap((media) => Object.keys(media.examples ?? {}));
    const success = Object.keys(doc.responses).filter((code) => code.startsWith("2"));
    const pick = (candidates: string[]) => candidates.find((n) => n in requestExamples);
    // A 404 transaction sends a valid body (the 2xx response's), so the answer is about the id alone.
    const name = status.startsWith("2") ? pick(names(status)) : (pick(names(status)) ?? pick(success.flatMap(names)));
    return name === undefined ? undefined : requestExamples[name]?.value;
  }

  hooks.beforeEach((transaction) => {
    const op = operationOf(transaction);
    if (!op) {
      fail(transaction, `${transaction.name}: no operation in generated OPERATIONS for this method and path`);
      return;
    }
    const status = Number(transaction.expected.statusCode);
    if (!isRunnable(op, status)) {
      transaction.skip = true;
      ctx.skipped.push({
        transaction: transaction.name,
        reason: `${status}: dredd sends the same valid request for every documented status`,
      });
      return;
    }
    const doc = documented(op);
    const headers = transaction.request.headers;

    // Public operations (`security: []`) are called without a key, as a load balancer or a payer's browser would.
    deleteHeader(headers, "Authorization");
    if (!op.public) headers.Authorization = `Bearer ${ctx.secret}`;

    deleteHeader(headers, "Idempotency-Key");
    if (op.method === "post") headers["Idempotency-Key"] = `dredd-${randomUUID()}`;
    // The optional `Sandbox-Simulate` (failure injection) is sent empty too; a plain request sends none.
    deleteHeader(headers, "Sandbox-Simulate");
    // Likewise the event stream's optional `Last-Event-ID` (an event id, which no example can name):
    // without it the stream starts from now; dredd sends no optional query parameter, so `follow=false`
    // is set here, and the stream ends at once (one that follows new events never would).
    deleteHeader(headers, "Last-Event-ID");
    if (op.operationId === "streamEvents") {
      const uri = new URL(transaction.fullPath, "http://dredd.invalid");
      uri.searchParams.set("follow", "false");
      transaction.fullPath = `${uri.pathname}${uri.search}`;
      transaction.request.uri = transaction.fullPath;
    }

    const pathParam = doc.parameters?.find((p) => p.in === "path");
    if (pathParam) {
      const exampleId = String(pathParam.example);
      let id: string | undefined;
      if (status === 404) {
        id = unusedId(exampleId.slice(0, exampleId.indexOf("_")));
      } else {
        id = ctx.fixtures[op.operationId];
        if (id === undefined) {
          fail(transaction, `no fixture for ${op.operationId}: add one in test/contract/dredd.test.ts`);
          return;
        }
      }
      const segment = `/${encodeURIComponent(exampleId)}`;
      if (!transaction.fullPath.includes(segment)) {
        fail(transaction, `the request path ${transaction.fullPath} does not contain the example id ${exampleId}`);
        return;
      }
      const replacement = `/${encodeURIComponent(id)}`;
      transaction.fullPath = transaction.fullPath.replace(segment, replacement);
      transaction.request.uri = transaction.request.uri.replace(segment, replacement);
      transaction.id = transaction.id.replace(segment, replacement); // what reports show
    }

    if (doc.requestBody) {
      const body = requestExample(doc, String(status));
      if (body === undefined) {
        fail(transaction, `${op.operationId} has no request example paired with its ${status} response`);
        return;
      }
      const missing: string[] = [];
      const withIds = withFixtureIds(body, ctx.bodyIds, missing);
      if (missing.length > 0) {
        fail(transaction, `no body fixture for ${missing.join(", ")}: add its prefix in test/contract/dredd.test.ts`);
        return;
      }
      const fields = ctx.bodyFields?.[op.operationId] ?? {};
      transaction.request.body = JSON.stringify({ ...(withIds as Record<string, unknown>), ...fields });
      headers["Content-Type"] = "application/json";
    }
  });

  hooks.beforeEachValidation((transaction) => {
    const op = operationOf(transaction);
    const real = transaction.real;
    if (!op || !real || transaction.skip) return;
    const errors = checkAnswer(ctx, op, transaction);

    // dredd 14 compares Content-Type exactly against the documented media type and so rejects
    // `application/json; charset=utf-8` (dredd#1391), which Express sends for every res.json. JSON is
    // UTF-8 by definition (RFC 8259 §8.1), so the parameter adds nothing: strip exactly that
    // parameter (checkAnswer above has already seen the header as sent) and let any other one fail.
    const contentType = header(real.headers, "content-type");
    if (contentType !== undefined) {
      real.headers["content-type"] = contentType.replace(/;\s*charset=utf-8\s*$/i, "");
    }

    // dredd's OpenAPI 3 parser ignores the Header Object's `required` and expects every documented
    // header (here `Idempotent-Replayed`, sent only on replays). Keep the required ones only.
    const documentedHeaders = documented(op).responses[transaction.expected.statusCode ?? ""]?.headers ?? {};
    for (const [name, spec] of Object.entries(documentedHeaders)) {
      if (!spec.required) deleteHeader(transaction.expected.headers, name);
    }

    // For OpenAPI 3, dredd's body check compares the real body's keys with an example: the documented
    // one, or one it makes up from the schema with every optional property. Both demand more than the
    // contract: optional fields (`errors` on a 404 problem, the example merchant's `metadata.crm_id`)
    // and the fields of whatever type a list example happens to show first (events). The body is
    // checked against the schema itself instead (checkAnswer above), so dredd is left status and headers.
    delete transaction.expected.body;

    if (errors.length > 0) fail(transaction, `contract check: ${errors.join("; ")}`);
  });
}

/** The answer against the canonical 3.1 document: status documented, content type, required headers, body schema. */
export function checkAnswer(
  ctx: Pick<ContractHooksContext, "contract">,
  op: Operation,
  transaction: Pick<DreddTransaction, "real" | "expected">,
): string[] {
  const real = transaction.real;
  if (!real) return ["no response"];
  const errors: string[] = [];
  if (String(real.statusCode) !== transaction.expected.statusCode) {
    errors.push(`status ${real.statusCode}, the transaction expects ${transaction.expected.statusCode}`);
  }
  let body: unknown;
  // A text answer's body (an event stream, a CSV, Adyen's `[accepted]`) is a string, as its schema says;
  // every other answer is JSON.
  if (real.body !== undefined && /^text\//i.test(header(real.headers, "content-type") ?? "")) {
    body = real.body;
  } else if (real.body !== undefined && real.body !== "") {
    try {
      body = JSON.parse(real.body);
    } catch {
      return [...errors, "the body is not JSON"];
    }
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(real.headers)) headers.set(name, value);
  const check = ctx.contract.checkResponse({
    method: op.method,
    path: op.path,
    status: real.statusCode,
    contentType: header(real.headers, "content-type"),
    body,
    headers,
  });
  return [...errors, ...check.errors];
}
