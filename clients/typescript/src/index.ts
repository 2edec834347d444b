/**
 * Typed client for the payments API: openapi-fetch over the types generated from the contract
 * (generated/types/api.ts), so every path, parameter, body and answer is checked by the compiler.
 *
 * What this module adds on top of openapi-fetch, all inside the fetch it is given:
 * - `Authorization: Bearer <key>` on every request (the contract's ServiceKeyAuth).
 * - An `Idempotency-Key` on every POST that has none (IdempotencyKeyHeader), kept across the retries
 *   of one call: the server then replays the first answer instead of acting twice.
 * - Retries with exponential backoff and full jitter on network errors, time-outs, 429, 5xx and the
 *   409 `idempotency_request_in_progress` (the same key still in flight), honouring `Retry-After`.
 *   Other 4xx, other 409s included, are final.
 *
 * Results keep openapi-fetch's shape (`{ data, error, response }`, `error` being the RFC 9457 problem,
 * the contract's Problem model); `unwrap` turns a result into its data or a thrown `PaymentsApiError` for
 * callers who prefer exceptions.
 */
import type { components, operations, paths } from "@payments/contract/types";
import createClient, { type Client } from "openapi-fetch";

export type { WebhookEvent, WebhookEventOf, WebhookEventType } from "./webhooks.ts";
export type { components, operations, paths };

type Schemas = components["schemas"];
export type Problem = Schemas["Problem"];
export type ProblemDetail = Schemas["ProblemDetail"];
export type ErrorCode = Schemas["ErrorCode"];
export type Merchant = Schemas["Merchant"];
export type MerchantCreate = Schemas["MerchantCreate"];
export type MerchantUpdate = Schemas["MerchantUpdate"];
export type MerchantList = Schemas["MerchantList"];
export type MerchantStatus = Schemas["MerchantStatus"];
export type Metadata = Schemas["Metadata"];
export type Token = Schemas["Token"];
export type TokenCreate = Schemas["TokenCreate"];
export type TokenReveal = Schemas["TokenReveal"];
export type DeletedToken = Schemas["DeletedToken"];
export type ServiceKey = Schemas["ServiceKey"];
export type ServiceKeyCreate = Schemas["ServiceKeyCreate"];
export type ServiceKeyRotate = Schemas["ServiceKeyRotate"];
export type ServiceKeyWithSecret = Schemas["ServiceKeyWithSecret"];
export type ServiceKeyList = Schemas["ServiceKeyList"];
export type Scope = Schemas["Scope"];
export type Event = Schemas["Event"];
export type EventList = Schemas["EventList"];
export type EventType = Schemas["EventType"];
export type Cashout = Schemas["Cashout"];
export type CashoutCreate = Schemas["CashoutCreate"];
export type PaymentLink = Schemas["PaymentLink"];
export type PaymentLinkCreate = Schemas["PaymentLinkCreate"];
export type PaymentLinkPayment = Schemas["PaymentLinkPayment"];

/** The client: `GET`, `POST`, `PATCH`, `DELETE`… typed by the contract's `paths`. */
export type PaymentsClient = Client<paths>;

/**
 * The client's options. Requests authenticate with `apiKey`; a page served by the payments server
 * itself (the developer console) instead passes `headers` that stand for its session (its CSRF token;
 * the browser adds the session cookie) and no key.
 */
export type PaymentsClientOptions = PaymentsClientSettings &
  (
    | {
        /** A service key secret (`key_test_…` or `key_live_…`), sent as `Authorization: Bearer <key>`. */
        apiKey: string;
        /** More headers for every request. */
        headers?: Record<string, string>;
      }
    | {
        apiKey?: never;
        /** Headers that authenticate every request in place of a key (a same-origin console session). */
        headers: Record<string, string>;
      }
  );

export interface PaymentsClientSettings {
  /** Default `http://127.0.0.1:3000` (the local server). */
  baseUrl?: string;
  /** The fetch to send requests with; default `globalThis.fetch`. */
  fetch?: (request: Request) => Promise<Response>;
  /** Retries after the first attempt; default 2. 0 turns retrying off. */
  maxRetries?: number;
  /** Time limit of one attempt in milliseconds; a timed-out attempt counts as a network error. Default 30 000. */
  timeoutMs?: number;
  /** Makes the `Idempotency-Key` of a POST that has none; default `crypto.randomUUID`. */
  idempotencyKey?: () => string;
  /** Waits between attempts; default a timer. Tests inject one to see the delays without waiting. */
  sleep?: (ms: number) => Promise<void>;
  /** Uniform random number in [0, 1) for the backoff jitter; default `Math.random`. */
  random?: () => number;
  /** The current time in milliseconds, to read an HTTP-date `Retry-After`; default `Date.now`. */
  now?: () => number;
}

const DEFAULT_BASE_URL = "http://127.0.0.1:3000";
const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_TIMEOUT_MS = 30_000;
/** Backoff before retry n (0-based) is uniform in [0, min(MAX, BASE · 2ⁿ)): "full jitter". */
const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 8_000;
/** A `Retry-After` beyond this is clamped: a client call should not silently block for longer. */
export const MAX_RETRY_AFTER_MS = 60_000;

export function createPaymentsClient(options: PaymentsClientOptions): PaymentsClient {
  return createClient<paths>({
    baseUrl: options.baseUrl ?? DEFAULT_BASE_URL,
    headers: {
      ...options.headers,
      ...(options.apiKey === undefined ? {} : { Authorization: `Bearer ${options.apiKey}` }),
    },
    fetch: retryingFetch(options),
  });
}

/**
 * The fetch handed to openapi-fetch: one call of it is one API call, so the idempotency key chosen
 * here is the one every retry of that call sends.
 */
function retryingFetch(options: PaymentsClientSettings): (request: Request) => Promise<Response> {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const newKey = options.idempotencyKey ?? (() => crypto.randomUUID());
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;

  return async (request) => {
    if (request.method === "POST" && !request.headers.has("Idempotency-Key")) {
      request.headers.set("Idempotency-Key", newKey());
    }
    for (let retry = 0; ; retry++) {
      const timeout = AbortSignal.timeout(timeoutMs);
      // Each attempt sends a clone: a Request body can be read only once, and the original stays unread.
      const attempt = new Request(request.clone(), { signal: AbortSignal.any([request.signal, timeout]) });
      let response: Response;
      try {
        response = await send(attempt);
      } catch (error) {
        // fetch rejects with a TypeError when the network fails; the caller's own abort is final.
        const retryable = !request.signal.aborted && (error instanceof TypeError || timeout.aborted);
        if (!retryable || retry >= maxRetries) throw error;
        await sleep(backoff(retry, random));
        continue;
      }
      if (!(await isRetryable(response)) || retry >= maxRetries) return response;
      const delay = retryAfterMs(response.headers.get("Retry-After"), now) ?? backoff(retry, random);
      // Free the connection of the answer we are dropping.
      await response.body?.cancel();
      await sleep(delay);
    }
  };
}

/**
 * 429 and 5xx are worth retrying; a 409 only when it is `idempotency_request_in_progress` (the same key
 * still running): every other 409 (`invalid_state_transition`, `merchant_inactive`,
 * `idempotency_replay_unavailable`, ...) is final, and retrying it would only repeat the refusal.
 */
async function isRetryable(response: Response): Promise<boolean> {
  if (response.status === 429 || response.status >= 500) return true;
  if (response.status !== 409) return false;
  try {
    const problem = (await response.clone().json()) as { code?: unknown };
    return problem.code === "idempotency_request_in_progress";
  } catch {
    return false; // not a problem body: not ours to interpret
  }
}

function backoff(retry: number, random: () => number): number {
  return Math.floor(random() * Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** retry));
}

/** `Retry-After` is either delay-seconds or an HTTP date (RFC 9110 §10.2.3); anything else is ignored. */
function retryAfterMs(header: string | null, now: () => number): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  let ms: number;
  if (/^\d+$/.test(value)) ms = Number(value) * 1000;
  else {
    const date = Date.parse(value);
    if (Number.isNaN(date)) return undefined;
    ms = date - now();
  }
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

/** An answer other than a 2xx with a body, thrown by `unwrap`. */
export class PaymentsApiError extends Error {
  override readonly name = "PaymentsApiError";
  /** The HTTP status of the answer. */
  readonly status: number;
  /** The RFC 9457 problem (the contract's Problem), or `undefined` when the body was not one (e.g. a proxy's HTML page). */
  readonly problem: Problem | undefined;
  /** The `Request-Id` the server gave the request; quote it when reporting a problem. */
  readonly requestId: string | undefined;

  constructor(response: Response, body: unknown) {
    const problem = isProblem(body) ? body : undefined;
    const what = problem
      ? `${problem.code}: ${problem.detail ?? problem.title}`
      : response.statusText || "no problem body";
    super(`${response.status} ${what}`);
    this.status = response.status;
    this.problem = problem;
    this.requestId = response.headers.get("Request-Id") ?? problem?.request_id;
  }

  /** The problem's stable error code, when the body was a problem. */
  get code(): ErrorCode | undefined {
    return this.problem?.code;
  }
}

function isProblem(body: unknown): body is Problem {
  if (typeof body !== "object" || body === null) return false;
  const b = body as Record<string, unknown>;
  return (
    typeof b.type === "string" &&
    typeof b.title === "string" &&
    typeof b.status === "number" &&
    typeof b.code === "string"
  );
}

/**
 * Returns the data of a successful result and throws `PaymentsApiError` otherwise:
 * `const merchant = unwrap(await client.POST("/v1/merchants", { body }))`.
 */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.response.ok && result.data !== undefined) return result.data;
  throw new PaymentsApiError(result.response, result.error);
}
