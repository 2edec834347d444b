import document from "@payments/contract/openapi.3.1.json" with { type: "json" };
import { OPERATIONS, type OperationId } from "@payments/contract/operations";
import type { operations } from "@payments/contract/types";

// The generated OpenAPI 3.1 document is the server's source of truth: routes, request validation, response
// validation and the scope each operation needs (its `x-scopes`) all come from it, never from a second
// hand-written table.

export type { OperationId };

export interface OpenApiOperation {
  operationId: string;
  security?: Record<string, string[]>[];
  [key: string]: unknown;
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { securitySchemes: Record<string, unknown>; [key: string]: unknown };
  [key: string]: unknown;
}

/** One API operation: id, method, OpenAPI path template and the scopes that grant it (any one, or `*`). */
export type ContractOperation = (typeof OPERATIONS)[number];

/** A fresh copy each call: express-openapi-validator mutates the document it is given. */
export function loadContract(): OpenApiDocument {
  // A static import, so the production build (esbuild, server/build.mjs) carries the document inside dist/ (docs/operating.md "Production").
  return structuredClone(document as unknown as OpenApiDocument);
}

/** The API operations, generated from the document's paths and security requirements. */
export function contractOperations(): readonly ContractOperation[] {
  return OPERATIONS;
}

// Typed views of each operation's input and output, so a handler that returns a body the contract
// does not allow fails `tsc`, not a customer.

type Op<K extends OperationId> = operations[K];

export type RequestBody<K extends OperationId> =
  Op<K> extends {
    requestBody: { content: { "application/json": infer B } };
  }
    ? B
    : Op<K> extends { requestBody?: { content: { "application/json": infer B } } }
      ? B | undefined
      : undefined;

export type PathParams<K extends OperationId> =
  Op<K> extends { parameters: { path: infer P } }
    ? P extends Record<string, unknown>
      ? P
      : Record<string, never>
    : Record<string, never>;

export type QueryParams<K extends OperationId> =
  Op<K> extends { parameters: { query?: infer Q } }
    ? Q extends Record<string, unknown>
      ? Q
      : Record<string, never>
    : Record<string, never>;

type Responses<K extends OperationId> = Op<K>["responses"];
type SuccessStatus<K extends OperationId> = Extract<keyof Responses<K>, 200 | 201 | 202>;

type JsonOf<R> = R extends { content: { "application/json": infer B } } ? B : never;

/** The success replies an operation may give: a status and a body the contract allows for it. */
export type Reply<K extends OperationId> = {
  [S in SuccessStatus<K>]: { status: S; body: JsonOf<Responses<K>[S]> };
}[SuccessStatus<K>];
