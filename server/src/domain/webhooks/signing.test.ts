import { describe, expect, it } from "vitest";
import { SIGNATURE_HEADER, signature, signatureHeader } from "./signing.ts";

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
