import { afterAll, beforeAll } from "vitest";
import { describeAgreement, type ValidRequest } from "../support/agreement.ts";
import { loadContract } from "../support/openapi.ts";
import { type RunningPrism, startPrism } from "../support/prism.ts";

// The Prism mock's side of the suite it shares with the real server (support/agreement.ts). Valid
// requests are the document's own examples: the ids its schemas show, the first example body.
//
// One documented exception. For a body the schema refuses, the server answers 400 invalid_request on
// every operation. Prism chooses the status itself, from a fixed preference (its mocker tries 422,
// then 400, then `default`, and serves that response's first example), and no option or `Prefer`
// header changes that order: on the operations whose document also declares 422 (a reused
// Idempotency-Key, an insufficient balance), the mock answers 422 with that example. Removing 422
// from those operations would hide real answers of the server; so the mock differs there, and
// docs/mock.md "The sandbox mock (Prism)" says so.

const contract = loadContract();
type Doc = {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { $ref?: string; in?: string; name?: string; schema?: { $ref?: string } }[];
        requestBody?: { content: Record<string, { examples?: Record<string, { value: unknown }> }> };
        responses: Record<string, unknown>;
      }
    >
  >;
  components: { schemas: Record<string, { example?: unknown; examples?: unknown[] }> };
};
const doc = contract.document as unknown as Doc;

function exampleRequest(path: string, method: string): ValidRequest {
  const op = doc.paths[path]?.[method];
  const params: Record<string, string> = {};
  for (const p of op?.parameters ?? []) {
    if (p.in !== "path" || !p.name) continue;
    const schema = doc.components.schemas[p.schema?.$ref?.split("/").pop() ?? ""];
    params[p.name] = String(schema?.examples?.[0] ?? schema?.example ?? "");
  }
  const body = Object.values(op?.requestBody?.content["application/json"]?.examples ?? {})[0]?.value;
  return { path: params, ...(op?.requestBody ? { body: body ?? {} } : {}) };
}

let prism: RunningPrism;
beforeAll(async () => {
  prism = await startPrism();
}, 35_000);
afterAll(() => prism?.stop());

describeAgreement("the Prism mock", () => ({
  url: prism.url,
  key: "key_test_4fQx9ZkT2mB7rLp1WcYd8sNa0123",
  valid: async (op) => exampleRequest(op.path, op.method),
  invalidBodyStatus: (op) => ("422" in (doc.paths[op.path]?.[op.method]?.responses ?? {}) ? 422 : 400),
}));
