import { createHmac } from "node:crypto";

// The delivery signature (the contract's WebhookDeliveryHeaders.signature, a format fixed by this API):
// `X-Service-Signature: t=<unix seconds>,v1=<lowercase hex HMAC-SHA256 of "<t>.<raw body>">`, keyed with the
// endpoint's whole `whsec_…` secret: byte-compatible with Stripe's scheme. During a secret rotation's grace
// period one `v1=` is sent per secret, the new one first.

export const SIGNATURE_HEADER = "X-Service-Signature";

/** The hex HMAC-SHA256 of `<timestamp>.<body>` under `secret`. */
export function signature(timestamp: number, body: string, secret: string): string {
  return createHmac("sha256", secret).update(`${timestamp}.`).update(body, "utf8").digest("hex");
}

/** The header value for `body` sent at `timestamp` (Unix seconds), one `v1=` per secret. */
export function signatureHeader(timestamp: number, body: string, secrets: readonly string[]): string {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new RangeError(`bad timestamp ${timestamp}`);
  if (secrets.length === 0) throw new TypeError("at least one secret is needed to sign");
  return [`t=${timestamp}`, ...secrets.map((s) => `v1=${signature(timestamp, body, s)}`)].join(",");
}
