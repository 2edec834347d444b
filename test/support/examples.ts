import type { OPERATIONS } from "@payments/contract/operations";
import { loadContract } from "./openapi.ts";

// An operation's first (default) examples: the request Prism and the reference show first, and the
// success answer Prism serves for it. The contract puts each operation's plain happy path first
// (spec/scripts/generate.mjs, `orderExamples`).

type Operation = (typeof OPERATIONS)[number];
interface Example {
  value: unknown;
}
interface Media {
  examples?: Record<string, Example>;
}
type Doc = {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { $ref?: string; in?: string; name?: string; schema?: { $ref?: string } }[];
        requestBody?: { content: Record<string, Media> };
        responses: Record<string, { content?: Record<string, Media> }>;
      }
    >
  >;
  components: { schemas: Record<string, { example?: unknown; examples?: unknown[] }> };
};

const doc = loadContract().document as unknown as Doc;

export interface ExampleRequest {
  /** Path parameters: the example of each one's schema (the ids the examples use). */
  path: Record<string, string>;
  /** The first request example's body, when the operation takes one (`{}` if it has no example). */
  body?: unknown;
}

/** The request made of the operation's first examples. */
export function exampleRequest(op: Pick<Operation, "path" | "method">): ExampleRequest {
  const operation = doc.paths[op.path]?.[op.method];
  const params: Record<string, string> = {};
  for (const p of operation?.parameters ?? []) {
    if (p.in !== "path" || !p.name) continue;
    const schema = doc.components.schemas[p.schema?.$ref?.split("/").pop() ?? ""];
    params[p.name] = String(schema?.examples?.[0] ?? schema?.example ?? "");
  }
  const first = firstExample(operation?.requestBody?.content["application/json"]);
  return { path: params, ...(operation?.requestBody ? { body: first?.value ?? {} } : {}) };
}

/** The operation's success status and its first example (name and value), if it has one. */
export function firstSuccessExample(
  op: Pick<Operation, "path" | "method">,
): { status: number; name: string; value: unknown } | undefined {
  const responses = doc.paths[op.path]?.[op.method]?.responses ?? {};
  for (const [status, response] of Object.entries(responses)) {
    if (!status.startsWith("2")) continue;
    for (const media of Object.values(response.content ?? {})) {
      const first = firstExample(media);
      if (first) return { status: Number(status), ...first };
    }
  }
  return undefined;
}

/** The name of the operation's first request example, if it has one. */
export function firstRequestExampleName(op: Pick<Operation, "path" | "method">): string | undefined {
  return firstExample(doc.paths[op.path]?.[op.method]?.requestBody?.content["application/json"])?.name;
}

function firstExample(media: Media | undefined): { name: string; value: unknown } | undefined {
  const [entry] = Object.entries(media?.examples ?? {});
  return entry ? { name: entry[0], value: entry[1].value } : undefined;
}
