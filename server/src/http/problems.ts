import type { ErrorCode } from "../domain/errors.ts";

// DESIGN §4: the one table from error code to HTTP status and title. Every problem the API sends is
// built here, so `type`, `title` and `status` can never disagree.

export const PROBLEM_TYPES: Record<ErrorCode, { status: number; title: string }> = {
  invalid_request: { status: 400, title: "Invalid request" },
  invalid_card: { status: 400, title: "Invalid card" },
  unauthorized: { status: 401, title: "Unauthorized" },
  card_declined: { status: 402, title: "Card declined" },
  forbidden: { status: 403, title: "Forbidden" },
  not_found: { status: 404, title: "Not found" },
  method_not_allowed: { status: 405, title: "Method not allowed" },
  conflict: { status: 409, title: "Conflict" },
  invalid_state_transition: { status: 409, title: "Invalid state transition" },
  idempotency_request_in_progress: { status: 409, title: "Request in progress" },
  idempotency_replay_unavailable: { status: 409, title: "Replay unavailable" },
  merchant_inactive: { status: 409, title: "Merchant not active" },
  payment_link_unavailable: { status: 409, title: "Payment link unavailable" },
  payload_too_large: { status: 413, title: "Payload too large" },
  unsupported_media_type: { status: 415, title: "Unsupported media type" },
  idempotency_key_reused: { status: 422, title: "Idempotency key reused" },
  insufficient_balance: { status: 422, title: "Insufficient balance" },
  rate_limited: { status: 429, title: "Too many requests" },
  internal_error: { status: 500, title: "Internal error" },
  service_unavailable: { status: 503, title: "Service unavailable" },
};

export const PROBLEM_BASE_URI = "https://docs.payments.dev/errors/";

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail?: string;
  code: ErrorCode;
  param?: string;
  request_id?: string;
  errors?: { param?: string; message: string }[];
}

export function problem(
  code: ErrorCode,
  detail: string | undefined,
  extra: { param?: string | undefined; requestId?: string; errors?: { param?: string; message: string }[] } = {},
): ProblemBody {
  const { status, title } = PROBLEM_TYPES[code];
  const body: ProblemBody = { type: PROBLEM_BASE_URI + code, title, status, code };
  if (detail) body.detail = detail;
  if (extra.param) body.param = extra.param;
  if (extra.requestId) body.request_id = extra.requestId;
  if (extra.errors?.length) body.errors = extra.errors;
  return body;
}
