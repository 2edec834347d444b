import document from "@payments/contract/openapi.3.1.json" with { type: "json" };
import { OPERATIONS, type OperationId } from "@payments/contract/operations";

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

// A static import, so the production build (esbuild, server/build.mjs) carries the document inside dist/ (docs/operating.md "Production").
// cast: the JSON module's type is the document's literal shape; OpenApiDocument is the view the server reads of it.
const contract = document as unknown as OpenApiDocument;

/**
 * The contract itself, shared by every reader that only reads it (the operations' checks, the error
 * reference, the served document's copy): nothing may change it. Issue 36: each copy of the 1.7 MB
 * document cost a start ~5 % of its CPU, and only the validator needs one (validator/document.ts).
 */
export function contractDocument(): Readonly<OpenApiDocument> {
  return contract;
}

/** A fresh copy each call, for a reader that changes it (express-openapi-validator mutates the document it is given). */
export function loadContract(): OpenApiDocument {
  return structuredClone(contract);
}

/** The API operations, generated from the document's paths and security requirements. */
export function contractOperations(): readonly ContractOperation[] {
  return OPERATIONS;
}
