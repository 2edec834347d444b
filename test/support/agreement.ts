import { OPERATIONS } from "@payments/contract/operations";
import { describe, expect, it } from "vitest";
import { loadContract } from "./openapi.ts";

// One suite, run against the Prism mock (test/mock/agreement.test.ts) and against the real server
// (test/e2e/agreement.test.ts), operation by operation: what QA sees in the sandbox mock is what an
// integrator meets on the server.
//   - a valid request: the operation's documented success status, with a body valid for it;
//   - a body the schema refuses (an unknown field; every body schema is sealed): 400 invalid_request
//     naming the field at fault (`param`, `errors[]`);
//   - no key (operations that need one): 401 unauthorized;
//   - the path with a trailing slash: 404, no operation (spec/main.tsp "Paths": paths are exact);
//   - `{}` where the operation takes no body: the same success as no body (spec/main.tsp "Request bodies");
// and every answer an RFC 9457 problem where it is an error, whose `type` links to the entry for its
// code in the error reference of the address that answered (`<base URL>/docs/errors#<code>`, the
// Problem model in spec/common/problems.tsp).

const contract = loadContract();
type Operation = (typeof OPERATIONS)[number];

export interface ValidRequest {
  path: Record<string, string>;
  body?: unknown;
}

export interface Target {
  url: string;
  /** A key that may call every operation. */
  key: string;
  /** A request the document allows, for `op`. */
  valid(op: Operation): Promise<ValidRequest>;
}

/** The problem `type` of `code` at the target: its error reference's entry for the code. */
function problemType(target: Target, code: string): string {
  return new URL(`/docs/errors#${code}`, target.url).href;
}

/** The operation's one documented success status. */
function successStatus(op: Operation): number {
  const responses = contract.document.paths[op.path]?.[op.method]?.responses ?? {};
  const ok = Object.keys(responses).filter((s) => s.startsWith("2"));
  if (ok.length !== 1) throw new Error(`${op.operationId} documents ${ok.length} success statuses`);
  return Number(ok[0]);
}

function takesBody(op: Operation): boolean {
  return (
    (contract.document.paths[op.path]?.[op.method] as { requestBody?: unknown } | undefined)?.requestBody !== undefined
  );
}

async function send(
  target: Target,
  op: Operation,
  request: ValidRequest,
  options: { key?: string | null; body?: unknown; trailingSlash?: boolean } = {},
) {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => request.path[name] ?? "");
  const url = new URL(options.trailingSlash ? `${path}/` : path, target.url);
  const headers: Record<string, string> = {};
  const key = options.key === undefined ? target.key : options.key;
  if (key !== null && !op.public) headers.authorization = `Bearer ${key}`;
  const body = "body" in options ? options.body : request.body;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(url, {
    method: op.method.toUpperCase(),
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // A path the document does not have is checked by nothing but the test itself.
  const check = options.trailingSlash
    ? { errors: [] }
    : await contract.checkFetchResponse(op.method, op.path, response);
  const text = await response.text();
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    body: text ? JSON.parse(text) : undefined,
    check,
  };
}

export function describeAgreement(name: string, target: () => Target) {
  describe(`${name}: the suite the mock and the server share`, () => {
    for (const op of OPERATIONS) {
      describe(`${op.operationId} (${op.method.toUpperCase()} ${op.path})`, () => {
        it(`answers a valid request with its documented success, ${successStatus(op)}`, async () => {
          const t = target();
          const answer = await send(t, op, await t.valid(op));
          expect(answer.status, JSON.stringify(answer.body)).toBe(successStatus(op));
          expect(answer.check.errors).toEqual([]);
        });

        if (takesBody(op)) {
          it("answers a body the schema refuses with a problem", async () => {
            const t = target();
            const request = await t.valid(op);
            const answer = await send(t, op, request, {
              body: { ...(request.body as object), not_in_the_contract: true },
            });
            expect(answer.status, JSON.stringify(answer.body)).toBe(400);
            expect(answer.type).toMatch(/^application\/problem\+json/);
            expect(answer.check.errors).toEqual([]);
            expect(answer.body).toMatchObject({
              type: problemType(t, "invalid_request"),
              code: "invalid_request",
              param: expect.any(String),
            });
            const { param, errors } = answer.body as { param: string; errors?: { param?: string; message: string }[] };
            expect(errors?.length, "errors[] lists each failure").toBeGreaterThan(0);
            expect(errors?.[0]).toEqual({ param, code: expect.any(String), message: expect.any(String) });
          });
        }

        if (!takesBody(op) && op.method !== "get") {
          it("takes `{}` as no body", async () => {
            const t = target();
            const answer = await send(t, op, await t.valid(op), { body: {} });
            expect(answer.status, JSON.stringify(answer.body)).toBe(successStatus(op));
            expect(answer.check.errors).toEqual([]);
          });
        }

        if (op.method === "get") {
          it("answers the path with a trailing slash with 404", async () => {
            const t = target();
            const answer = await send(t, op, await t.valid(op), { trailingSlash: true });
            expect(answer.status, JSON.stringify(answer.body)).toBe(404);
            expect(answer.type).toMatch(/^application\/problem\+json/);
          });
        }

        if (!op.public) {
          it("answers a request without a key with 401", async () => {
            const t = target();
            const answer = await send(t, op, await t.valid(op), { key: null });
            expect(answer.status).toBe(401);
            expect(answer.type).toMatch(/^application\/problem\+json/);
            expect(answer.check.errors).toEqual([]);
            expect(answer.body).toMatchObject({ type: problemType(t, "unauthorized"), code: "unauthorized" });
          });
        }
      });
    }
  });
}
