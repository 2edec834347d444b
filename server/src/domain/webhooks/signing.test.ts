import { describe, expect, it } from "vitest";
import {
  SIGNATURE_HEADER,
  signature,
  signatureHeader,
  signatureScheme,
  standardWebhooksHeaders,
  standardWebhooksKey,
} from "./signing.ts";

// The delivery signature (WebhookDeliveryHeaders.signature): `t=<unix seconds>,v1=<hex HMAC-SHA256 of
// "<t>.<raw body>">` under the endpoint's whole secret. The expected values were computed outside this
// code, with `printf '%s' '<t>.<body>' | openssl dgst -sha256 -hmac '<secret>'`, so a change to what is
// signed (the separator, the order, the body's encoding) or how fails here, not only at a receiver.

const T = 1_700_000_000;
const BODY = '{"id":"evt_1","amount":1000,"note":"café"}';
const OLD = "whsec_test_secret";
const NEW = "whsec_new_secret";
const OLD_SIG = "5d26399b41cefaf7dd989679ac48c0890a4394bd182206391a071feec875f19f";
const NEW_SIG = "2114a15b6c0463bac8dd60768587c5c51f82dcd4f20d3cae4cd7a44dd1bf1e7e";

describe("webhook signatures", () => {
  it("is the lowercase hex HMAC-SHA256 of '<t>.<body>' (UTF-8) under the whole secret", () => {
    expect(signature(T, BODY, OLD)).toBe(OLD_SIG);
    expect(signature(T, BODY, NEW)).toBe(NEW_SIG);
  });

  it("changes with the timestamp, the body and the secret", () => {
    expect(signature(T + 1, BODY, OLD)).not.toBe(OLD_SIG);
    expect(signature(T, `${BODY} `, OLD)).not.toBe(OLD_SIG);
    expect(signature(T, BODY, `${OLD}x`)).not.toBe(OLD_SIG);
  });

  it("names the header X-Service-Signature", () => {
    expect(SIGNATURE_HEADER).toBe("X-Service-Signature");
  });

  it("writes t= then one v1= per secret, in the order given (the new secret first during a rotation)", () => {
    expect(signatureHeader(T, BODY, [OLD])).toBe(`t=${T},v1=${OLD_SIG}`);
    expect(signatureHeader(T, BODY, [NEW, OLD])).toBe(`t=${T},v1=${NEW_SIG},v1=${OLD_SIG}`);
    expect(signatureHeader(0, "", [OLD])).toBe(`t=0,v1=${signature(0, "", OLD)}`);
  });

  it("refuses a timestamp that is not a whole, non-negative, safe number of seconds", () => {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 1]) {
      expect(() => signatureHeader(bad, BODY, [OLD]), String(bad)).toThrow(RangeError);
    }
  });

  it("refuses to sign without a secret", () => {
    expect(() => signatureHeader(T, BODY, [])).toThrow(TypeError);
  });
});

// The Standard Webhooks scheme: `v1,<base64 HMAC-SHA256 of "<id>.<t>.<body>">`, keyed with the bytes the
// secret's base64 after `whsec_` decodes to. The expected values were computed outside this code:
// printf '%s' '<id>.<t>.<body>' | openssl dgst -sha256 -mac HMAC -macopt hexkey:<key as hex> -binary | base64
// with the key from `printf '%s' '<secret without whsec_>' | base64 -d | xxd -p`.
describe("Standard Webhooks signatures", () => {
  const A = "whsec_Qm7wE2rT5yU8iO1pA4sD7fG0hJ3kL6zX";
  const B = "whsec_9Kd2Lp7Qw4Er1Ty6Ui3Op8As5Df0GhJk";
  const A_SIG = "v1,Ht+iVSpqXoparEpjZSoNsCm1n3RLf3SQlqfB+HKRTo8=";
  const B_SIG = "v1,nLk6HzyIkVQn7Z6TJpCJ/3XGuZMI18JUCQ9LMorVfKM=";

  it("keys with the base64 after whsec_, decoded (24 bytes for our 32 base62 characters)", () => {
    expect(standardWebhooksKey(A).toString("hex")).toBe("426ef0136ad3e7253c88ed69038b03edf1b4849de42facd7");
    expect(() => standardWebhooksKey("whsec_not*base64")).toThrow(TypeError);
    expect(() => standardWebhooksKey("whsec_abc")).toThrow(TypeError);
  });

  it("signs '<id>.<timestamp>.<body>' and sends the id and timestamp it signed", () => {
    expect(standardWebhooksHeaders("evt_1", T, BODY, [A])).toEqual({
      "webhook-id": "evt_1",
      "webhook-timestamp": String(T),
      "webhook-signature": A_SIG,
    });
    expect(standardWebhooksHeaders("evt_2", T, BODY, [A])["webhook-signature"]).not.toBe(A_SIG);
    expect(standardWebhooksHeaders("evt_1", T + 1, BODY, [A])["webhook-signature"]).not.toBe(A_SIG);
  });

  it("carries one signature per secret, space-separated, the new one first", () => {
    expect(standardWebhooksHeaders("evt_1", T, BODY, [B, A])["webhook-signature"]).toBe(`${B_SIG} ${A_SIG}`);
  });

  it("refuses a bad timestamp and an empty list of secrets, as the other scheme does", () => {
    expect(() => standardWebhooksHeaders("evt_1", -1, BODY, [A])).toThrow(RangeError);
    expect(() => standardWebhooksHeaders("evt_1", T, BODY, [])).toThrow(TypeError);
  });

  it("treats an endpoint without a stored scheme (made before the choice) as x_service_signature", () => {
    expect(signatureScheme({})).toBe("x_service_signature");
    expect(signatureScheme({ signature_scheme: "standard_webhooks" })).toBe("standard_webhooks");
  });
});
