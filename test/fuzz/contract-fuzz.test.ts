import { OPERATIONS } from "@payments/contract/operations";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientFor, createCharge, createMerchant, createToken, insertEvent } from "../e2e/fixtures.ts";
import { type Contract, loadContract } from "../support/openapi.ts";
import { rawRequest } from "../support/raw-http.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// The document is the whole truth about what the server answers (spec/main.tsp). For every operation
// the contract has, this suite sends FUZZ_RUNS requests (default 200) derived from the document's own
// examples and schemas, most of them malformed: wrong types, missing and extra fields, boundary numbers
// and lengths, bad ids and cursors, bodies where none is taken, the bodies sent by accident (none, none
// and no Content-Length, zero bytes, `null`, `[]`, a string, a number), wrong content types, bad or
// missing keys and Idempotency-Keys. Every answer must carry a status the document declares for that operation, a
// body valid for that status, `application/problem+json` for a problem, and never a 5xx. The seed is
// fixed (FUZZ_SEED) so a failure reproduces; fast-check shrinks it to the smallest failing request.

const RUNS = Number(process.env.FUZZ_RUNS ?? 200);
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);

const contract = loadContract();
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Record<string, unknown>;
const doc = contract.document as unknown as {
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, Schema>; parameters: Record<string, ParameterObject> };
};
interface ParameterObject {
  name: string;
  in: "path" | "query" | "header";
  required?: boolean;
  schema?: Schema;
  $ref?: string;
}
interface OperationObject {
  parameters?: ParameterObject[];
  requestBody?: { content: Record<string, { examples?: Record<string, { value: Json }> }> };
}

/** A `$ref` followed into the document (one level, as the generated document uses them). */
function deref<T>(node: T & { $ref?: string }): T {
  if (!node?.$ref) return node;
  const [, , kind, name] = node.$ref.split("/");
  return (doc.components as unknown as Record<string, Record<string, T>>)[kind as string]?.[name as string] as T;
}

/** An id the schema's pattern accepts (`^tx_[0-9A-Za-z]{24}$` → `tx_` and 24 characters), or its example. */
function exampleOf(schema: Schema | undefined): string {
  const s = deref(schema ?? {}) as Schema;
  const examples = s.examples as unknown[] | undefined;
  if (typeof s.example === "string") return s.example;
  if (typeof examples?.[0] === "string") return examples[0];
  const prefix = /^\^([a-z]+_)\[0-9A-Za-z\]\{24\}\$$/.exec(String(s.pattern ?? ""))?.[1];
  return prefix ? `${prefix}${"A1b2C3d4E5f6G7h8I9j0K1l2"}` : "x";
}

interface FuzzRequest {
  path: Record<string, string>;
  query: [string, string][];
  headers: Record<string, string>;
  body:
    | { kind: "none" }
    | { kind: "json"; value: Json }
    | { kind: "raw"; type: string; text: string }
    // A Content-Type and no body at all, not even a Content-Length (curl's `-X POST -H …` without
    // `-d`): fetch cannot send it, so it goes over a raw socket (support/raw-http.ts).
    | { kind: "unframed"; type: string };
}

/**
 * The body shapes sent by accident (spec/main.tsp "Request bodies"): nothing, zero bytes, and JSON that
 * is no object. Each is also sent once to every operation, on a real object with a valid key (`fuzz`'s
 * examples), before the random requests.
 */
const ACCIDENTAL_BODIES: FuzzRequest["body"][] = [
  { kind: "none" },
  { kind: "unframed", type: "application/json" },
  { kind: "unframed", type: "text/plain" },
  { kind: "raw", type: "application/json", text: "" },
  ...([null, [], "text", 5, {}, true] as Json[]).map((value) => ({ kind: "json" as const, value })),
];
const accidentalBody = fc.constantFrom(...ACCIDENTAL_BODIES);

/** One request per accidental body shape, to the operation's real objects, with a valid key. */
function accidentalRequests(path: string, method: string, ids: Map<string, string>, sandboxKey: string): FuzzRequest[] {
  const op = doc.paths[path]?.[method] as OperationObject;
  const params = (op.parameters ?? []).map((p) => deref(p));
  const pathParams = Object.fromEntries(
    params
      .filter((p) => p.in === "path")
      .map((p) => {
        const example = exampleOf(p.schema);
        return [p.name, ids.get(example.split("_")[0] ?? "") ?? example];
      }),
  );
  return ACCIDENTAL_BODIES.map((body) => ({
    path: pathParams,
    query: [],
    headers: { authorization: `Bearer ${sandboxKey}` },
    body,
  }));
}

const weird = fc.constantFrom(
  "",
  " ",
  "0",
  "-1",
  "1e3",
  "0x10",
  "null",
  "true",
  "[]",
  "{}",
  "../../etc/passwd",
  "%00",
  "é",
  "😀",
  "a".repeat(300),
  "4242 4242 4242 4242",
);

/** A JSON value of any shape, for replacing a field with something of the wrong type. */
const anyJson: fc.Arbitrary<Json> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -(2 ** 53), max: 2 ** 53 }),
  fc.constantFrom(0, -1, 1.5, 2 ** 31, 2 ** 53, -(2 ** 53), 1e300),
  fc.string({ maxLength: 20 }),
  fc.constantFrom("", "a".repeat(2000), "4242424242424242"),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }),
);

/** Variants of a JSON body: itself, a field removed, a field replaced, a field added, or something else. */
function bodyVariants(example: Json): fc.Arbitrary<Json> {
  if (example === null || typeof example !== "object" || Array.isArray(example)) return anyJson;
  const keys = Object.keys(example);
  const variants: fc.Arbitrary<Json>[] = [fc.constant(example), anyJson, fc.constant([example])];
  if (keys.length > 0) {
    const key = fc.constantFrom(...keys);
    variants.push(
      key.map((k) => {
        const { [k]: _gone, ...rest } = example;
        return rest;
      }),
      fc.tuple(key, anyJson).map(([k, v]) => ({ ...example, [k]: v })),
    );
  }
  variants.push(fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), anyJson).map(([k, v]) => ({ ...example, [k]: v })));
  return fc.oneof(...variants);
}

function requestFor(
  path: string,
  method: string,
  ids: Map<string, string>,
  sandboxKey: string,
): fc.Arbitrary<FuzzRequest> {
  const op = doc.paths[path]?.[method] as OperationObject;
  const params = (op.parameters ?? []).map((p) => deref(p));
  const realId = (example: string) => ids.get(example.split("_")[0] ?? "") ?? example;

  const pathParams = params.filter((p) => p.in === "path");
  const pathArb = fc.record(
    Object.fromEntries(
      pathParams.map((p) => {
        const example = exampleOf(p.schema);
        // Never empty, "." or "..": those change the route itself (another operation, or none), which is
        // not this operation's answer to judge.
        const segment = fc
          .oneof(weird, fc.string({ maxLength: 30 }))
          .filter((v) => v !== "" && v !== "." && v !== "..");
        return [p.name, fc.oneof(fc.constant(realId(example)), fc.constant(example), segment)];
      }),
    ) as Record<string, fc.Arbitrary<string>>,
  );

  const queryParams = params.filter((p) => p.in === "query");
  const queryArb = fc.array(
    fc.oneof(
      ...(queryParams.length > 0
        ? [
            fc.tuple(
              fc.constantFrom(...queryParams.map((p) => p.name)),
              fc.oneof(weird, fc.integer().map(String), fc.constant("10")),
            ),
          ]
        : []),
      fc.tuple(fc.constantFrom("unknown", "limit", "starting_after", "ending_before"), weird),
    ),
    { maxLength: 3 },
  );

  const auth = fc.oneof(
    { weight: 6, arbitrary: fc.constant(`Bearer ${sandboxKey}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom("", "Bearer", "Bearer key_test_x", `Basic ${sandboxKey}`, `Bearer ${sandboxKey}x`),
    },
  );
  const idempotencyKey = fc.option(fc.oneof(fc.uuid(), fc.constantFrom("", "k".repeat(256), "4242424242424242")), {
    nil: undefined,
  });
  const headersArb = fc.record({ auth, idempotencyKey }).map(({ auth: a, idempotencyKey: k }) => {
    const headers: Record<string, string> = {};
    if (a !== "") headers.authorization = a;
    if (method === "post" && k !== undefined) headers["idempotency-key"] = k;
    return headers;
  });

  const example = Object.values(op.requestBody?.content["application/json"]?.examples ?? {})[0]?.value;
  const withRealIds = (value: Json): Json =>
    JSON.parse(
      JSON.stringify(value ?? null).replace(/"([a-z]+)_[0-9A-Za-z]{24}"/g, (m, prefix: string) =>
        ids.has(prefix) ? JSON.stringify(ids.get(prefix)) : m,
      ),
    ) as Json;
  const raw = fc.record({
    kind: fc.constant("raw" as const),
    type: fc.constantFrom("text/plain", "application/x-www-form-urlencoded", "application/json", "application/xml"),
    text: fc.oneof(fc.constantFrom("{", "not json", "a=1&b=2", '{"a":', "<x/>"), fc.string({ maxLength: 50 })),
  });
  const bodyArb: fc.Arbitrary<FuzzRequest["body"]> =
    method === "get"
      ? fc.constant({ kind: "none" as const }) // (the accidental bodies are sent to GETs as examples)
      : op.requestBody
        ? fc.oneof(
            {
              weight: 6,
              arbitrary: bodyVariants(withRealIds(example ?? {})).map((value) => ({ kind: "json" as const, value })),
            },
            { weight: 1, arbitrary: raw },
            { weight: 1, arbitrary: accidentalBody },
          )
        : fc.oneof(
            { weight: 6, arbitrary: fc.constant({ kind: "none" as const }) },
            { weight: 1, arbitrary: anyJson.map((value) => ({ kind: "json" as const, value })) },
            { weight: 1, arbitrary: raw },
            { weight: 1, arbitrary: accidentalBody },
          );

  return fc.record({ path: pathArb, query: queryArb, headers: headersArb, body: bodyArb });
}

describe("schema-derived fuzzing of every operation", { timeout: 600_000 }, () => {
  let server: TestServer;
  /** Real objects by id prefix, so some requests reach them instead of answering 404. */
  const ids = new Map<string, string>();
  const tally = { requests: 0, statuses: new Map<number, number>() };

  beforeAll(async () => {
    server = await startTestServer();
    const client = clientFor(server, server.sandboxKey);
    ids.set("mch", (await createMerchant(client)).id);
    ids.set("tok", (await createToken(client)).id);
    ids.set("tx", (await createCharge(client)).id);
    ids.set("evt", (await insertEvent(server)).id);
    ids.set("kid", (await server.running.domain.serviceKeys.issue(false, { name: "fuzz", scopes: ["fraud"] })).key.id);
  });
  afterAll(async () => {
    console.log(
      `fuzz figures: ${JSON.stringify({ operations: OPERATIONS.length, requests: tally.requests, runs_per_operation: RUNS, seed: SEED, statuses: Object.fromEntries([...tally.statuses].sort()) })}`,
    );
    await server?.close();
  });

  /** Fuzzes one operation against `checker`; resolves to fast-check's report (failed or not). */
  function fuzz(op: (typeof OPERATIONS)[number], checker: Contract, runs: number) {
    return fc.check(
      fc.asyncProperty(requestFor(op.path, op.method, ids, server.sandboxKey), async (request) => {
        const url = new URL(
          op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(request.path[name] ?? "")),
          server.url,
        );
        for (const [name, value] of request.query) url.searchParams.append(name, value);
        const headers = { ...request.headers };
        let body: string | undefined;
        if (request.body.kind === "json") {
          headers["content-type"] = "application/json";
          body = JSON.stringify(request.body.value);
        } else if (request.body.kind === "raw") {
          headers["content-type"] = request.body.type;
          body = request.body.text;
        } else if (request.body.kind === "unframed") {
          headers["content-type"] = request.body.type;
        }
        // fetch sends no body with a GET and always frames one it sends: those go over a raw socket.
        const response =
          request.body.kind === "unframed" || (op.method === "get" && body !== undefined)
            ? await rawRequest(server.url, {
                method: op.method.toUpperCase(),
                target: `${url.pathname}${url.search}`,
                headers,
                body,
              })
            : await fetch(url, { method: op.method.toUpperCase(), headers, body });
        tally.requests++;
        tally.statuses.set(response.status, (tally.statuses.get(response.status) ?? 0) + 1);
        const check = await checker.checkFetchResponse(op.method, op.path, response);
        // The checker read a copy; an event stream that follows new events stays open until closed.
        await response.body?.cancel();
        const what = `${op.method.toUpperCase()} ${url.pathname}${url.search} → ${response.status}`;
        expect(response.status, what).toBeLessThan(500);
        expect(check.errors, what).toEqual([]);
        if (response.status >= 400) {
          expect(response.headers.get("content-type"), what).toMatch(/^application\/problem\+json/);
        }
      }),
      {
        seed: SEED,
        numRuns: runs,
        endOnFailure: false,
        examples: accidentalRequests(op.path, op.method, ids, server.sandboxKey).map((r) => [r] as [FuzzRequest]),
      },
    );
  }

  for (const op of OPERATIONS) {
    it(`${op.operationId} (${op.method.toUpperCase()} ${op.path}) answers only as documented`, async () => {
      const report = await fuzz(op, contract, RUNS);
      expect(report.failed, fc.defaultReportMessage(report) ?? "").toBe(false);
    });
  }

  it("catches a status the document does not declare (415 removed from createMerchant's responses)", async () => {
    const altered = structuredClone(contract.document) as unknown as typeof doc;
    const createMerchant = altered.paths["/v1/merchants"]?.post as { responses: Record<string, unknown> };
    delete createMerchant.responses["415"];
    const op = OPERATIONS.find((o) => o.operationId === "createMerchant") as (typeof OPERATIONS)[number];
    const report = await fuzz(op, loadContract(altered as unknown as Parameters<typeof loadContract>[0]), RUNS);
    expect(report.failed).toBe(true);
    expect(String(report.errorInstance)).toContain("→ 415");
  });
});
