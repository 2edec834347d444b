import type { components } from "@payments/contract/types";
import type { ErrorCode } from "../domain/kernel/errors.ts";

/** One item of a problem's `errors[]` (ProblemDetail in spec/common/problems.tsp): field, code, words. */
export type ProblemItem = components["schemas"]["ProblemDetail"];

// The one table from error code (ErrorCode, spec/common/problems.tsp) to HTTP status, title and
// meaning. Every problem the API sends is built here, so `type`, `title` and `status` can never disagree,
// and the error reference (GET /docs/errors, server/src/http/pages.ts) is rendered from the same table,
// so every code a problem can carry has its entry there.

export interface ProblemType {
  status: number;
  title: string;
  /** What the code means and what to do about it: the error reference's entry. */
  meaning: string;
}

export const PROBLEM_TYPES: Record<ErrorCode, ProblemType> = {
  invalid_request: {
    status: 400,
    title: "Invalid request",
    meaning:
      "The request is malformed or a field is invalid: `param` names the (first) field at fault and `errors` lists every failure, each with its field (`param`), a stable `code` (`missing`, `unknown_field`, `invalid_type`, `invalid_format`, `token_required`, ...) and a `message` that says what the field expects. Fix the request; retrying it unchanged fails again.",
  },
  invalid_card: {
    status: 400,
    title: "Invalid card",
    meaning:
      "The card number fails the Luhn check or its brand's length, or the expiry is in the past. The number is masked in the detail.",
  },
  card_number_in_text: {
    status: 400,
    title: "Card number in text",
    meaning:
      "A free-text field (a name, description, metadata key or value, card holder, e-mail address, URL or value-list item) holds what looks like a card number: a Luhn-valid run of 13 to 19 digits, with or without separators. `param` names the field and `errors` every such field; nothing of the request was stored. Card numbers are accepted only in card number fields (`card` of POST /v1/tokens, the payment page's card): remove the number and send the request again.",
  },
  secret_in_text: {
    status: 400,
    title: "Secret in text",
    meaning:
      "A free-text field holds what looks like a secret this API issues: a service-key secret (`key_test_…`, `key_live_…`), a webhook signing secret (`whsec_…`), a console session token or a payment-page token, in any case, percent-encoded or base64-encoded. `param` names the field and `errors` every such field; nothing of the request was stored. Secrets belong in the `Authorization` header only: remove it, send the request again, and rotate the secret, since it was sent where it could be seen.",
  },
  unauthorized: {
    status: 401,
    title: "Unauthorized",
    meaning:
      "No service key, or a malformed, unknown, expired or revoked one (or a rotated-out secret past its grace period). The answer never says which: the server's log does.",
  },
  card_declined: {
    status: 402,
    title: "Card declined",
    meaning: "The card issuer declined the payment.",
  },
  forbidden: {
    status: 403,
    title: "Forbidden",
    meaning:
      "The key is valid but lacks the scope this operation needs; the detail names both. Use a key with that scope (or `*`).",
  },
  not_found: {
    status: 404,
    title: "Not found",
    meaning:
      "No object with this id in the caller's environment (an id from the other environment is not found either), or no such route.",
  },
  method_not_allowed: {
    status: 405,
    title: "Method not allowed",
    meaning: "The path exists but not with this HTTP method.",
  },
  conflict: {
    status: 409,
    title: "Conflict",
    meaning: "The object changed while the request was being applied (a concurrent change). Retry.",
  },
  invalid_state_transition: {
    status: 409,
    title: "Invalid state transition",
    meaning:
      "The object's state does not allow this change (capturing a voided charge, refunding an uncaptured one, rotating a revoked key); the detail says why.",
  },
  refund_exceeds_remaining: {
    status: 409,
    title: "Refund exceeds what is left",
    meaning:
      "The refund's `amount` is more than what is left to refund on the charge (captured minus already refunded); the detail says how much is left. Refund at most that, or send no `amount` to refund all of it.",
  },
  idempotency_request_in_progress: {
    status: 409,
    title: "Request in progress",
    meaning:
      "A request with this Idempotency-Key is still being processed. Retry shortly with the same key: you then get its answer.",
  },
  idempotency_replay_unavailable: {
    status: 409,
    title: "Replay unavailable",
    meaning:
      "The request with this Idempotency-Key already succeeded, but its answer carried a secret or a card number, which is never kept for replay. Look the named object up instead.",
  },
  merchant_inactive: {
    status: 409,
    title: "Merchant not active",
    meaning: "The merchant is suspended or closed; only active merchants can take payments.",
  },
  payment_link_unavailable: {
    status: 409,
    title: "Payment link unavailable",
    meaning:
      "The payment link cannot take a payment now: it is turned off, expired, or used up (`max_uses`). The detail says which.",
  },
  payload_too_large: {
    status: 413,
    title: "Payload too large",
    meaning: "The request body is larger than the server accepts (its BODY_LIMIT_BYTES).",
  },
  unsupported_media_type: {
    status: 415,
    title: "Unsupported media type",
    meaning:
      'The body is not JSON: send it with `Content-Type: application/json` (UTF-8). `curl -d` sends a form unless you add `-H "Content-Type: application/json"`.',
  },
  idempotency_key_reused: {
    status: 422,
    title: "Idempotency key reused",
    meaning:
      "This Idempotency-Key was already used with a different request (method, path or body) within 24 hours. Use a new key for a new request.",
  },
  insufficient_balance: {
    status: 422,
    title: "Insufficient balance",
    meaning: "The merchant's available balance cannot cover the refund or the cashout; nothing was written.",
  },
  rate_limited: {
    status: 429,
    title: "Too many requests",
    meaning:
      "More requests than this key may make per second, or, without a valid key, more than this address may make per minute. Wait the seconds in `Retry-After`.",
  },
  internal_error: {
    status: 500,
    title: "Internal error",
    meaning:
      "An unexpected error; the body carries no internals. It was logged with the request id: quote it when reporting. A POST's Idempotency-Key is forgotten, so a retry runs again.",
  },
  service_unavailable: {
    status: 503,
    title: "Service unavailable",
    meaning:
      "The instance cannot serve requests now: its store does not answer, it is shutting down, or the store stayed busy for longer than a request waits (another instance on the same database held it). Nothing was changed, and a POST's Idempotency-Key is forgotten. Retry shortly: after the seconds in `Retry-After` when the answer has it.",
  },
  sandbox_limit_reached: {
    status: 409,
    title: "Sandbox limit reached",
    meaning:
      "The server already holds as many sandboxes as its operator allows (`SANDBOX_LIMIT`, default 100). Delete one you no longer need (`DELETE /v1/sandboxes/{id}`), then create the new one.",
  },
  acquirer_in_doubt: {
    status: 503,
    title: "Acquirer's answer in doubt",
    meaning:
      "The acquirer did not answer the call the request sent (a time-out, a dropped connection, or its 5xx or 429): the outcome is being settled. Send the same request again with the same `Idempotency-Key` after the seconds in `Retry-After`. A new charge's retry resumes the same charge (the same id, never a second authorization) and answers what the acquirer decided; without a key nothing was stored, and whatever the acquirer authorized is reversed within IDEMPOTENCY_LOCK_SECONDS plus one jobs interval (JOBS_INTERVAL_SECONDS). A capture's or void's retry (a review's approval or rejection too) completes the call already sent, never a second one, and answers the charge; until then the charge stays `authorized`, and without a key the server completes it within the same bound. A refund whose call is in doubt is answered 201 instead: it is recorded, and the server completes its call.",
  },
  acquirer_not_configured: {
    status: 503,
    title: "No acquirer configured",
    meaning:
      "Production payments are off: the server has no acquirer configured (its operator sets `PRODUCTION_ACQUIRER`). Nothing was charged or stored. The sandbox is unaffected.",
  },
};

/** Where the error reference is served; a problem's `type` is `<BASE_URL><this>#<code>`. */
/** Whether a value is one of the API's error codes (a key of PROBLEM_TYPES). */
export const isErrorCode = (value: unknown): value is ErrorCode =>
  typeof value === "string" && Object.hasOwn(PROBLEM_TYPES, value);

/** Every error code, in PROBLEM_TYPES' order. */
export const ERROR_CODES: readonly ErrorCode[] = Object.keys(PROBLEM_TYPES).filter(isErrorCode);

export const ERROR_REFERENCE_PATH = "/docs/errors";

/** The `type` of a problem with this code, on the server whose public address is `baseUrl` (BASE_URL). */
export function problemTypeUri(baseUrl: string, code: ErrorCode): string {
  return `${baseUrl}${ERROR_REFERENCE_PATH}#${code}`;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail?: string;
  code: ErrorCode;
  param?: string;
  request_id?: string;
  errors?: ProblemItem[];
}

/**
 * A problem body. Its `type` is the reference's path and anchor (`/docs/errors#<code>`) until
 * sendProblem (./errors.ts) makes it absolute with the server's BASE_URL, which a problem built here
 * does not know.
 */
export function problem(
  code: ErrorCode,
  detail: string | undefined,
  extra: { param?: string | undefined; requestId?: string; errors?: ProblemItem[] | undefined } = {},
): ProblemBody {
  const { status, title } = PROBLEM_TYPES[code];
  const body: ProblemBody = { type: problemTypeUri("", code), title, status, code };
  if (detail) body.detail = detail;
  if (extra.param) body.param = extra.param;
  if (extra.requestId) body.request_id = extra.requestId;
  if (extra.errors?.length) body.errors = extra.errors;
  return body;
}
