/**
 * Webhook signatures (the contract's WebhookDeliveryHeaders.signature, a format fixed by this API):
 * `X-Service-Signature: t=<unix seconds>,v1=<hex>` where `<hex>` is the lowercase hex HMAC-SHA256 of
 * `<t>.<raw body>` keyed with the endpoint's secret. The scheme is byte-compatible with Stripe's, which
 * the tests use as an independent check.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { webhooks } from "@payments/contract/types";

/** The type names of the events the contract declares (its `webhooks` section). */
export type WebhookEventType = keyof webhooks;

/** The payload of one event type, read from the contract's `webhooks` section. */
export type WebhookEventOf<K extends WebhookEventType> = webhooks[K] extends {
  post: { requestBody: { content: { "application/json": infer Payload } } };
}
  ? Payload
  : never;

/** Any event: a union discriminated by `type`, which grows by itself when the contract adds an event. */
export type WebhookEvent = { [K in WebhookEventType]: WebhookEventOf<K> }[WebhookEventType];

/** The header that carries the signature: its name is a fixed fact of this API. */
export const SIGNATURE_HEADER = "X-Service-Signature";

/** Default acceptable age of a signature's timestamp, either way (Stripe's default; the contract says 300 s). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type WebhookVerificationReason =
  | "missing_header"
  | "malformed_header"
  | "no_signatures"
  | "timestamp_out_of_tolerance"
  | "signature_mismatch";

/** A delivery that does not verify. The receiver answers it with HTTP 401 (the contract's WebhookRejected). */
export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
  readonly reason: WebhookVerificationReason;

  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface VerifyWebhookOptions {
  /** The raw request body exactly as received: parse it only after verifying. */
  payload: string | Uint8Array;
  /** The `X-Service-Signature` header value. */
  header: string | null | undefined;
  /** The endpoint's secret; during a secret rotation pass both, and either one is accepted. */
  secret: string | string[];
  /** How far the timestamp may be from now, in the past or in the future. Default 300. */
  toleranceSeconds?: number;
  /** The current time in milliseconds since the epoch; default `Date.now`. */
  now?: () => number;
}

/**
 * Verifies a webhook delivery and returns its event (the steps WebhookDeliveryHeaders.signature lists):
 * 1. split the header on `,` and take the text after `=` of each part: `t` is the timestamp, every
 *    `v1` a signature (two of them while the sender rotates its secret);
 * 2. sign `<t>.<raw body>` with HMAC-SHA256 and each secret, as lowercase hex;
 * 3. compare with every `v1` in constant time; any match is enough;
 * 4. refuse a timestamp further than `toleranceSeconds` from now, either way, so a captured delivery
 *    cannot be replayed later.
 *
 * On failure it throws `WebhookVerificationError`, whose `reason` says why; the receiver must then
 * answer **401** and not act on the body. The event is the parsed body, typed by the contract; its
 * authenticity comes from the signature, so it is not validated again here.
 */
export function verifyWebhook(options: VerifyWebhookOptions): WebhookEvent {
  const { timestamp, signatures } = parseHeader(options.header);
  const secrets = secretList(options.secret);
  const body = bytes(options.payload);

  const matches = secrets.some((secret) => {
    const expected = Buffer.from(sign(timestamp, body, secret), "utf8");
    return signatures.some((candidate) => {
      const given = Buffer.from(candidate, "utf8");
      // timingSafeEqual needs equal lengths; the length of a hex digest is no secret.
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
  });
  if (!matches) {
    throw new WebhookVerificationError("signature_mismatch", "No signature matches the payload and secret.");
  }

  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((options.now ?? Date.now)() / 1000);
  if (Math.abs(nowSeconds - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError(
      "timestamp_out_of_tolerance",
      `The signature's timestamp ${timestamp} is more than ${tolerance} s from now (${nowSeconds}).`,
    );
  }
  return JSON.parse(new TextDecoder().decode(body)) as WebhookEvent;
}

export interface SignWebhookOptions {
  payload: string | Uint8Array;
  /** One secret, or several (one `v1=` each, as during a rotation). */
  secret: string | string[];
  /** Unix time in seconds; default now. */
  timestamp?: number;
}

/** Makes an `X-Service-Signature` header value for a payload, e.g. to test a receiver. */
export function signWebhookPayload(options: SignWebhookOptions): string {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new RangeError(`timestamp must be whole Unix seconds, got ${timestamp}`);
  }
  const body = bytes(options.payload);
  const t = String(timestamp);
  const v1 = secretList(options.secret).map((secret) => `v1=${sign(t, body, secret)}`);
  return [`t=${t}`, ...v1].join(",");
}

function sign(timestamp: string, body: Uint8Array, secret: string): string {
  return createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex");
}

function parseHeader(header: string | null | undefined): { timestamp: string; signatures: string[] } {
  if (header === null || header === undefined || header.trim() === "") {
    throw new WebhookVerificationError("missing_header", `The ${SIGNATURE_HEADER} header is missing.`);
  }
  let timestamp: string | undefined;
  const signatures: string[] = [];
  for (const part of header.split(",")) {
    const eq = part.indexOf("=");
    if (eq < 0) throw malformed(`part "${part.trim()}" has no "="`);
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === "t") {
      if (timestamp !== undefined) throw malformed("more than one t");
      if (!/^\d+$/.test(value)) throw malformed(`t is not Unix seconds: "${value}"`);
      timestamp = value;
    } else if (key === "v1") {
      signatures.push(value);
    }
    // Other schemes (a future v2, say) are skipped: the contract defines only v1.
  }
  if (timestamp === undefined) throw malformed("no t");
  if (signatures.length === 0) {
    throw new WebhookVerificationError("no_signatures", `The ${SIGNATURE_HEADER} header has no v1 signature.`);
  }
  return { timestamp, signatures };
}

function malformed(why: string): WebhookVerificationError {
  return new WebhookVerificationError("malformed_header", `The ${SIGNATURE_HEADER} header is malformed: ${why}.`);
}

function secretList(secret: string | string[]): string[] {
  const secrets = typeof secret === "string" ? [secret] : secret;
  if (secrets.length === 0 || secrets.some((s) => s === "")) throw new TypeError("a webhook secret is required");
  return secrets;
}

function bytes(payload: string | Uint8Array): Uint8Array {
  return typeof payload === "string" ? Buffer.from(payload, "utf8") : payload;
}
