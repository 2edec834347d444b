import type { components } from "@payments/contract/types";

// The one error type the domain throws. The HTTP layer maps `code` to a status through a single
// table (server/src/http/problems.ts); the domain never knows about HTTP.

/**
 * Every error code the API sends, from the contract (ErrorCode, spec/common/problems.tsp): a code the
 * domain throws that the spec does not list fails `tsc`.
 */
export type ErrorCode = components["schemas"]["ErrorCode"];

export interface FieldIssue {
  param?: string;
  message: string;
}

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly param: string | undefined;
  readonly errors: FieldIssue[] | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { param?: string; errors?: FieldIssue[]; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "DomainError";
    this.code = code;
    this.param = options.param;
    this.errors = options.errors;
  }
}

export const notFound = (what: string, id: string, param = "id") =>
  new DomainError("not_found", `No ${what} ${id} in this environment.`, { param });

export const invalid = (param: string, message: string) =>
  new DomainError("invalid_request", `${param}: ${message}`, { param, errors: [{ param, message }] });
