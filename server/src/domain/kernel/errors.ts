// The one error type the domain throws. The HTTP layer maps `code` to a status through a single
// table (server/src/http/problems.ts); the domain never knows about HTTP.

export type ErrorCode =
  | "invalid_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "invalid_state_transition"
  | "idempotency_key_reused"
  | "idempotency_request_in_progress"
  | "idempotency_replay_unavailable"
  | "payload_too_large"
  | "unsupported_media_type"
  | "method_not_allowed"
  | "invalid_card"
  | "insufficient_balance"
  | "merchant_inactive"
  | "card_declined"
  | "payment_link_unavailable"
  | "rate_limited"
  | "internal_error"
  | "service_unavailable";

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
