import { createHmac } from "node:crypto";
import type { SignatureScheme, WebhookEndpointDoc } from "./records.ts";

// How a delivery is signed: each endpoint chooses one of two header schemes (WebhookSignatureScheme in
// spec/resources/webhook-endpoints.tsp; the headers are WebhookDeliveryHeaders in spec/webhooks.tsp).
//
// - `x_service_signature` (the default), a format fixed by this API:
//   `X-Service-Signature: t=<unix seconds>,v1=<lowercase hex HMAC-SHA256 of "<t>.<raw body>">`, keyed with
//   the endpoint's whole `whsec_…` secret: byte-compatible with Stripe's scheme.
// - `standard_webhooks`: `webhook-id`, `webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256
//   of "<id>.<timestamp>.<raw body>">`, keyed with what the secret's part after `whsec_` decodes to as
//   base64, which is how the Standard Webhooks libraries read a `whsec_` secret. Our secrets' 32 base62
//   characters are valid unpadded base64 (24 bytes), so the secret an endpoint was given verifies as is.
//
// During a secret rotation's grace period each scheme carries one signature per secret, the new one first.

export const SIGNATURE_HEADER = "X-Service-Signature";

const SECRET_PREFIX = "whsec_";

/** The endpoint's scheme; endpoints made before the choice existed sign as `x_service_signature`. */
export function signatureScheme(endpoint: Pick<WebhookEndpointDoc, "signature_scheme">): SignatureScheme {
  return endpoint.signature_scheme ?? "x_service_signature";
}

/** The hex HMAC-SHA256 of `<timestamp>.<body>` under `secret`. */
export function signature(timestamp: number, body: string, secret: string): string {
  return createHmac("sha256", secret).update(`${timestamp}.`).update(body, "utf8").digest("hex");
}

function checkSigning(timestamp: number, secrets: readonly string[]): void {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new RangeError(`bad timestamp ${timestamp}`);
  if (secrets.length === 0) throw new TypeError("at least one secret is needed to sign");
}

/** The header value for `body` sent at `timestamp` (Unix seconds), one `v1=` per secret. */
export function signatureHeader(timestamp: number, body: string, secrets: readonly string[]): string {
  checkSigning(timestamp, secrets);
  return [`t=${timestamp}`, ...secrets.map((s) => `v1=${signature(timestamp, body, s)}`)].join(",");
}

/** The key a Standard Webhooks library derives from a `whsec_` secret: the base64 after the prefix, decoded. */
export function standardWebhooksKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) {
    throw new TypeError("a Standard Webhooks secret must be base64 after its whsec_ prefix");
  }
  return Buffer.from(encoded, "base64");
}

/** The Standard Webhooks headers for `body` with message id `id` sent at `timestamp` (Unix seconds). */
export function standardWebhooksHeaders(
  id: string,
  timestamp: number,
  body: string,
  secrets: readonly string[],
): { "webhook-id": string; "webhook-timestamp": string; "webhook-signature": string } {
  checkSigning(timestamp, secrets);
  const signed = `${id}.${timestamp}.${body}`;
  const signatures = secrets.map(
    (s) => `v1,${createHmac("sha256", standardWebhooksKey(s)).update(signed, "utf8").digest("base64")}`,
  );
  return { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": signatures.join(" ") };
}
