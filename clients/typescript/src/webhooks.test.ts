import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import {
  signWebhookPayload,
  verifyWebhook,
  type WebhookEvent,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from "./webhooks.ts";

// Stripe's SDK implements the same scheme independently: the signature is byte-compatible with Stripe's.
const stripe = new Stripe("sk_test_x");

const event = {
  id: "evt_5Tg7YhUj9IkOl2PzXc4VbNm6",
  created_at: "2026-11-21T10:21:07Z",
  livemode: false,
  type: "fraud.evaluated",
  tx_id: "tx_9Lm2QwErTy7UiOp3AsDf5GhJ",
  score: 96,
  decision: "block",
  signals: ["highrisk_bin", "vpn_detected"],
} satisfies WebhookEvent;
const payload = JSON.stringify(event);
const secret = "whsec_test_2f8a";
const t = 1_795_000_000;
const at = (seconds: number) => () => seconds * 1000;

function reasonOf(run: () => unknown): WebhookVerificationReason | undefined {
  try {
    run();
  } catch (e) {
    if (e instanceof WebhookVerificationError) return e.reason;
    throw e;
  }
  return undefined;
}

describe("verifyWebhook", () => {
  it("accepts a header made by Stripe's SDK and returns the typed event", () => {
    const header = stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: t });
    const verified = verifyWebhook({ payload, header, secret, now: at(t) });
    expect(verified).toEqual(event);
  });

  it("accepts the raw body as bytes", () => {
    const header = signWebhookPayload({ payload, secret, timestamp: t });
    expect(verifyWebhook({ payload: Buffer.from(payload), header, secret, now: at(t) })).toEqual(event);
  });

  it("makes headers that Stripe's SDK accepts", () => {
    const header = signWebhookPayload({ payload, secret, timestamp: t });
    expect(header).toMatch(/^t=1795000000,v1=[0-9a-f]{64}$/);
    const verified = stripe.webhooks.constructEvent(payload, header, secret, 300, undefined, t * 1000);
    expect(verified).toEqual(event);
  });

  it("signs the string <t>.<raw body> byte for byte", () => {
    // Non-ASCII and insignificant whitespace must survive: the signature covers the raw body.
    const raw = '{ "type": "fraud.evaluated", "note": "café" }';
    const header = signWebhookPayload({ payload: raw, secret, timestamp: t });
    expect(header).toBe(stripe.webhooks.generateTestHeaderString({ payload: raw, secret, timestamp: t }));
  });

  it("rejects a tampered body", () => {
    const header = signWebhookPayload({ payload, secret, timestamp: t });
    const tampered = payload.replace('"score":96', '"score":5');
    expect(reasonOf(() => verifyWebhook({ payload: tampered, header, secret, now: at(t) }))).toBe("signature_mismatch");
  });

  it("rejects a wrong secret", () => {
    const header = signWebhookPayload({ payload, secret: "whsec_other", timestamp: t });
    expect(reasonOf(() => verifyWebhook({ payload, header, secret, now: at(t) }))).toBe("signature_mismatch");
  });

  it("rejects an upper-case or truncated signature", () => {
    const header = signWebhookPayload({ payload, secret, timestamp: t });
    for (const bad of [header.toUpperCase().replace("T=", "t=").replace("V1=", "v1="), header.slice(0, -1)]) {
      expect(reasonOf(() => verifyWebhook({ payload, header: bad, secret, now: at(t) }))).toBe("signature_mismatch");
    }
  });

  it("rejects a timestamp older or newer than the tolerance, and accepts one at its edge", () => {
    const header = signWebhookPayload({ payload, secret, timestamp: t });
    expect(reasonOf(() => verifyWebhook({ payload, header, secret, now: at(t + 301) }))).toBe(
      "timestamp_out_of_tolerance",
    );
    expect(reasonOf(() => verifyWebhook({ payload, header, secret, now: at(t - 301) }))).toBe(
      "timestamp_out_of_tolerance",
    );
    expect(verifyWebhook({ payload, header, secret, now: at(t + 300) })).toEqual(event);
    expect(verifyWebhook({ payload, header, secret, now: at(t - 300) })).toEqual(event);
    expect(reasonOf(() => verifyWebhook({ payload, header, secret, toleranceSeconds: 10, now: at(t + 11) }))).toBe(
      "timestamp_out_of_tolerance",
    );
  });

  it("does not let a new timestamp pass with an old signature", () => {
    const header = signWebhookPayload({ payload, secret, timestamp: t });
    const replayed = header.replace(`t=${t}`, `t=${t + 1000}`);
    expect(reasonOf(() => verifyWebhook({ payload, header: replayed, secret, now: at(t + 1000) }))).toBe(
      "signature_mismatch",
    );
  });

  it.each<[string | null | undefined, WebhookVerificationReason]>([
    [undefined, "missing_header"],
    [null, "missing_header"],
    ["", "missing_header"],
    ["garbage", "malformed_header"],
    ["v1=abc", "malformed_header"],
    ["t=soon,v1=abc", "malformed_header"],
    ["t=1,t=2,v1=abc", "malformed_header"],
    [`t=${t}`, "no_signatures"],
    [`t=${t},v0=abc`, "no_signatures"],
  ])("rejects the header %j with %s", (header, reason) => {
    expect(reasonOf(() => verifyWebhook({ payload, header, secret, now: at(t) }))).toBe(reason);
  });

  it("accepts when the second of two v1 signatures matches (sender rotating its secret)", () => {
    const header = signWebhookPayload({ payload, secret: ["whsec_old", secret], timestamp: t });
    expect(header.match(/v1=/g)).toHaveLength(2);
    expect(verifyWebhook({ payload, header, secret, now: at(t) })).toEqual(event);
  });

  it("accepts when the second of two secrets matches (receiver rotating its secret)", () => {
    const header = signWebhookPayload({ payload, secret, timestamp: t });
    expect(verifyWebhook({ payload, header, secret: ["whsec_new", secret], now: at(t) })).toEqual(event);
    expect(reasonOf(() => verifyWebhook({ payload, header, secret: ["whsec_new", "whsec_x"], now: at(t) }))).toBe(
      "signature_mismatch",
    );
  });

  it("skips unknown schemes and whitespace around parts", () => {
    const v1 = signWebhookPayload({ payload, secret, timestamp: t }).split(",")[1];
    const header = `t=${t}, v0=deadbeef, ${v1}`;
    expect(verifyWebhook({ payload, header, secret, now: at(t) })).toEqual(event);
  });

  it("refuses to sign or verify without a secret, and refuses a fractional timestamp", () => {
    expect(() => signWebhookPayload({ payload, secret: [] })).toThrow(TypeError);
    expect(() => verifyWebhook({ payload, header: `t=${t},v1=ab`, secret: "" })).toThrow(TypeError);
    expect(() => signWebhookPayload({ payload, secret, timestamp: 1.5 })).toThrow(RangeError);
  });

  it("signs with the current time by default", () => {
    const header = signWebhookPayload({ payload, secret });
    expect(verifyWebhook({ payload, header, secret, toleranceSeconds: 5 })).toEqual(event);
  });
});
