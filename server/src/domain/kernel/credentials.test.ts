import { describe, expect, it } from "vitest";
import { holdsCredential, maskCredentials } from "./credentials.ts";
import { CREDENTIAL_WRITINGS, partsOf } from "./hostile-writings.ts";
import { displayUrl, maskSensitive } from "./mask.ts";

// The credential shapes (credentials.ts): every disguise of issue 35 item 6 is masked in what a person
// reads and refused in free text, and ordinary text is left alone.

const SECRETS = [
  "key_test_Hn1Eqkt6efRlpzz19VZbT0WC4eJBTRk6",
  "key_live_4fQxT2mB7rLp1WcYd8sNaZkT9QwErTy7",
  "whsec_9Kd2Lp7Qw4Er1Ty6Ui3Op8As5Df0GhJk",
];

describe.each(CREDENTIAL_WRITINGS)("a secret written $name", ({ write, refused, masked }) => {
  it.skipIf(!masked)("is masked in a log line, a query string and a path", () => {
    for (const secret of SECRETS) {
      const written = write(secret);
      const tail = written.slice(-16);
      for (const text of [
        `GET /v1/merchants?q=${written}&limit=2`,
        `/v1/merchants/${written}/balance`,
        `auth=${written}`,
      ]) {
        const shown = maskSensitive(text);
        expect(shown, text).not.toContain(tail);
        expect(shown, text).not.toContain(partsOf(secret).random.slice(4));
        expect(maskSensitive(shown)).toBe(shown);
      }
    }
  });

  it(refused ? "is refused in free text" : "is not refused in free text", () => {
    for (const secret of SECRETS) {
      expect(holdsCredential(`Order 1042: ${write(secret)} thanks`), write(secret)).toBe(refused);
    }
  });
});

describe("maskCredentials", () => {
  it("shows the marker as written and the first four characters", () => {
    expect(maskCredentials("KEY_TEST_Hn1Eqkt6efRlpzz19VZbT0WC4eJBTRk6")).toBe("KEY_TEST_Hn1E…");
    expect(maskCredentials("Key-Live-4fQxT2mB7rLp1WcYd8sNaZkT9QwErTy7")).toBe("Key-Live-4fQx…");
    expect(maskCredentials("key%25255Ftest%25255FHn1Eqkt6efRlpzz19VZbT0WC4eJBTRk6")).toBe("key%25255Ftest%25255FHn1E…");
    expect(maskCredentials("?a=key_test_&b=Hn1Eqkt6efRlpzz19VZbT0WC4eJBTRk6&c=1")).toBe("?a=key_test_&b=Hn1E…&c=1");
  });

  it("keeps the first four characters of a base64 run holding a secret, and of a random part alone", () => {
    expect(maskCredentials(`Authorization: Basic ${btoa("key_test_Hn1Eqkt6efRlpzz19VZbT0WC4eJBTRk6:")}`)).toBe(
      "Authorization: Basic a2V5X3Rlc3Rf…",
    );
    expect(maskCredentials("b=Hn1Eqkt6efRlpzz19VZbT0WC4eJBTRk6&c=1")).toBe("b=Hn1E…&c=1");
  });

  it("after a URL is decoded once, still masks what was encoded three times", () => {
    expect(displayUrl("/v1/x?k=whsec%2525255F9Kd2Lp7Qw4Er1Ty6Ui3Op8As5Df0GhJk", 1024)).toBe(
      "/v1/x?k=whsec%25255F9Kd2…",
    );
  });

  it("leaves hex digests, UUIDs, ids and words alone", () => {
    const untouched = [
      "3f9c2a7be81d4c0f9a6e5d2b1c0a9f8e",
      "3F9C2A7BE81D4C0F9A6E5D2B1C0A9F8E",
      "f47ac10b-58cc-4372-a567-0e02b2c3d479",
      "mch_2WsX3EdC4RfV5TgB6YhN7UjM",
      "req_2WsX3EdC4RfV5TgB6YhN7UjMabcdefgh",
      "kid_2Bn8VcXz4LkJh6GfDs1QaWe3",
      '"key_prefix":"key_test_abcd"',
      "the key_test_ prefix marks a sandbox key",
      "Authorization: Basic dXNlcjpwYXNzd29yZA==",
    ];
    for (const text of untouched) expect(maskCredentials(text), text).toBe(text);
  });
});

describe("holdsCredential", () => {
  it("does not take words, prefixes or short random parts for a secret", () => {
    for (const text of [
      "key_test_results for monday",
      "the key_test_ prefix marks a sandbox key",
      "key_test_abcd",
      "whsec_ secrets sign webhooks",
      "monkey_test_Hn1Eqkt6efRlpzz19VZbT0WC4eJBTRk6",
      "Hn1Eqkt6efRlpzz19VZbT0WC4eJBTRk6",
      "node v1.20.3",
      "https://shop.example/thanks?order=1042",
    ]) {
      expect(holdsCredential(text), text).toBe(false);
    }
  });

  it("finds a console session token and a payment-page token", () => {
    expect(holdsCredential("cookie csess_Zt4k9QwErTy7UiOp3AsDf5GhJkLz8Xc2Vb6Nm1Qw5E")).toBe(true);
    expect(
      holdsCredential(
        "https://shop.example/?t=v1.1763724135.Tb3kR9mQ2xW7pL4c.Jr5Xq0cW2v8tKn1bY6zHf3uLd9gSe4aPoM7iNwQxRk",
      ),
    ).toBe(true);
  });

  it("completes on 100 KB of base64 and of near-miss markers", () => {
    expect(holdsCredential("QUJD".repeat(25_000))).toBe(false);
    expect(holdsCredential("key_test_&b=".repeat(8_000))).toBe(false);
    expect(maskCredentials("a".repeat(100_000))).toBe("a".repeat(100_000));
  });
});
