import { OPERATIONS } from "@payments/contract/operations";
import { describe, expect, it } from "vitest";
import { loadContract } from "../support/openapi.ts";
import { rawRequest } from "../support/raw-http.ts";
import { RECIPES } from "../support/recipes.ts";
import { useServer } from "./fixtures.ts";

// No 5xx on a well-formed request (spec/main.tsp "Request bodies"): every operation of the document,
// generated from it (a new operation is covered by its recipe, support/recipes.ts), gets each body shape
// a client or a person with curl sends by accident, on an object that exists, with a valid key:
//   - no body at all, with and without `Content-Type: application/json` (curl's `-X POST -H …` without
//     `-d` sends no Content-Length: only a raw socket reproduces it), and zero bytes;
//   - `{}`, and JSON that is no object: `null`, `[]`, a string, a number.
// An empty body is the same request as `{}` (same status, code and field named); a non-object is a
// 400 naming `body`. Every answer is one the document declares for the operation, valid against it.

const contract = loadContract();

interface Shape {
  name: string;
  contentType?: string;
  /** undefined: no body and no Content-Length. */
  body?: string;
}

const EMPTY: Shape[] = [
  { name: "no body, no Content-Type" },
  { name: "no body, Content-Type: application/json (curl without -d)", contentType: "application/json" },
  { name: "zero bytes, Content-Type: application/json", contentType: "application/json", body: "" },
];
const OBJECT: Shape = { name: "{}", contentType: "application/json", body: "{}" };
const NOT_OBJECTS: Shape[] = ["null", "[]", '"text"', "5"].map((body) => ({
  name: body,
  contentType: "application/json",
  body,
}));

interface Answer {
  status: number;
  code?: string;
  param?: string;
  detail?: string;
}

describe("every operation × the body shapes sent by accident: a documented 2xx or 4xx", () => {
  const { server, client } = useServer();

  type Request = Awaited<ReturnType<(typeof RECIPES)[keyof typeof RECIPES]>>;

  async function send(op: (typeof OPERATIONS)[number], shape: Shape, request?: Request): Promise<Answer> {
    // A fresh object for each request that may change it (a capture, a refund): the next shape meets
    // the same state. A request refused before any handler runs changes nothing, so it may share one.
    const { path, query } = request ?? (await RECIPES[op.operationId]({ server, client, live: false }));
    const target = `${op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(path[name] ?? ""))}${
      query ? `?${new URLSearchParams(query)}` : ""
    }`;
    const headers: Record<string, string> = { Authorization: `Bearer ${server.sandboxKey}` };
    if (shape.contentType) headers["Content-Type"] = shape.contentType;
    const response = await rawRequest(server.url, {
      method: op.method.toUpperCase(),
      target,
      headers,
      body: shape.body,
    });
    const what = `${op.method.toUpperCase()} ${target} with ${shape.name} → ${response.status}`;
    const check = await contract.checkFetchResponse(op.method, op.path, response);
    expect(response.status, what).toBeLessThan(500);
    expect(check.errors, what).toEqual([]);
    if (response.status < 400) {
      await response.body?.cancel();
      return { status: response.status };
    }
    expect(response.headers.get("content-type"), what).toMatch(/^application\/problem\+json/);
    const problem = (await response.json()) as Answer;
    // Words for people: never the validator's raw words about the body, nor a bug's.
    expect(problem.detail, what).not.toMatch(/required property 'body'|Cannot read|undefined/);
    if (response.status === 400) expect(problem.param, `${what}: ${problem.detail}`).toBeTruthy();
    return { status: response.status, code: problem.code, param: problem.param, detail: problem.detail };
  }

  it("has a recipe, so a real object, for every operation of the document", () => {
    expect(OPERATIONS.filter((op) => !RECIPES[op.operationId]).map((op) => op.operationId)).toEqual([]);
  });

  for (const op of OPERATIONS) {
    it(`${op.operationId} (${op.method.toUpperCase()} ${op.path})`, async () => {
      const shared = await RECIPES[op.operationId]({ server, client, live: false });
      // A read changes nothing: every shape may ask about the same object.
      const fresh = op.method === "get" ? shared : undefined;
      const withObject = await send(op, OBJECT, fresh);
      for (const shape of EMPTY) {
        const answer = await send(op, shape, fresh);
        expect(
          { status: answer.status, code: answer.code, param: answer.param },
          `${shape.name}: ${answer.detail}`,
        ).toEqual({
          status: withObject.status,
          code: withObject.code,
          param: withObject.param,
        });
      }
      for (const shape of NOT_OBJECTS) {
        const answer = await send(op, shape, shared);
        expect(
          { status: answer.status, code: answer.code, param: answer.param },
          `${shape.name}: ${answer.detail}`,
        ).toEqual({
          status: 400,
          code: "invalid_request",
          param: "body",
        });
      }
    });
  }
});
