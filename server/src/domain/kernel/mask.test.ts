import { describe, expect, it } from "vitest";
import { maskCardNumbers, maskPan } from "./card-number.ts";
import { maskCredentials } from "./credentials.ts";
import { displayUrl, maskSensitive } from "./mask.ts";

describe("maskPan", () => {
  it("keeps the first four and last four digits and stars each hidden one", () => {
    expect(maskPan("4242424242424242")).toBe("4242********4242");
    expect(maskPan("378282246310005")).toBe("3782*******0005");
    expect(maskPan("6759649826438453123")).toBe("6759***********3123");
    expect(maskPan("675964982643")).toBe("6759****2643");
  });

  it("keeps separators in place and counts only digits", () => {
    expect(maskPan("4242 4242 4242 4242")).toBe("4242 **** **** 4242");
    expect(maskPan("4242-4242-4242-4241")).toBe("4242-****-****-4241");
  });

  it("stars everything below 12 digits rather than echo a short number", () => {
    expect(maskPan("12345678")).toBe("********");
    expect(maskPan("42424242424")).toBe("***********");
    expect(maskPan("")).toBe("");
  });
});

describe("maskCardNumbers", () => {
  it("masks a bare, spaced or dashed card number", () => {
    expect(maskCardNumbers("4242424242424242")).toBe("4242********4242");
    expect(maskCardNumbers("card 4242 4242 4242 4242 ok")).toBe("card 4242 **** **** 4242 ok");
    expect(maskCardNumbers("card 4242-4242-4242-4242 ok")).toBe("card 4242-****-****-4242 ok");
  });

  it("masks numbers the API accepts with irregular separators", () => {
    expect(maskCardNumbers("4242  4242 - 4242--4242")).toBe("4242  **** - ****--4242");
  });

  it("masks inside JSON, URLs and query strings", () => {
    expect(maskCardNumbers('{"card":"4242424242424242","holder":"Ada"}')).toBe(
      '{"card":"4242********4242","holder":"Ada"}',
    );
    expect(maskCardNumbers("GET /v1/pay?card=4242424242424242&cvc=123")).toBe(
      "GET /v1/pay?card=4242********4242&cvc=123",
    );
    expect(maskCardNumbers("https://x.test/cards/5555555555554444/charge")).toBe(
      "https://x.test/cards/5555********4444/charge",
    );
    expect(maskCardNumbers("redirect=%2Fpay%3Fcard%3D4242424242424242")).toBe(
      "redirect=%2Fpay%3Fcard%3D4242********4242",
    );
  });

  it("masks every card number in a line, Luhn-valid or not", () => {
    expect(maskCardNumbers("a=4242424242424241 b=378282246310005")).toBe("a=4242********4241 b=3782*******0005");
  });

  it("masks runs from 12 digits up, including runs longer than 19 digits", () => {
    expect(maskCardNumbers("x675964982643x")).toBe("x6759****2643x");
    // The documented price: a 13-digit epoch-milliseconds time cannot be told from a card number.
    expect(maskCardNumbers('"time":1763720467123')).toBe('"time":1763*****7123');
    expect(maskCardNumbers("00004242424242424242")).toBe("0000************4242");
    expect(maskCardNumbers("1763720467 4242424242424242")).toBe("1763****** ************4242");
  });

  it("leaves numbers that are not card-like alone", () => {
    const untouched = [
      "amount=1234567890",
      "at 1763720467 seconds",
      "2026-11-21T10:15:30.123Z",
      "2026-11-21 10:15:30",
      "fp_3f9c2a7be81d4c0f9a6e5d2b1c0a9f8e",
      "f47ac10b-58cc-4372-a567-0e02b2c3d479",
      "req_2WsX3EdC4RfV5TgB6YhN7UjM",
      "42424242424",
      "4242 4242 424",
      "+1 415-555-0100",
    ];
    for (const text of untouched) expect(maskCardNumbers(text)).toBe(text);
  });

  it("is idempotent: an already masked number stays as it is", () => {
    const once = maskCardNumbers("card=4242424242424242");
    expect(maskCardNumbers(once)).toBe(once);
  });

  it("completes on a 1 MB run of digits and masks it whole", () => {
    const line = "4".repeat(1 << 20);
    const masked = maskCardNumbers(line);
    expect(masked.length).toBe(line.length);
    expect(masked.slice(0, 6)).toBe("4444**");
    expect(masked.slice(-6)).toBe("**4444");
    expect(masked.replaceAll("*", "").length).toBe(8);
  });

  it("completes on a 1 MB line of mixed text with near-miss digit runs and separators", () => {
    const chunk = 'ts=1763720467 id="a1b2c3" n=12345678901 d=2026-11-21T10:15:30Z sep=1 - - - x ';
    const line = chunk.repeat(Math.ceil((1 << 20) / chunk.length));
    expect(maskCardNumbers(line)).toBe(line);
    const withCard = `${line}card=4242424242424242`;
    expect(maskCardNumbers(withCard).endsWith("card=4242********4242")).toBe(true);
  });

  it("completes on long runs of separators between digits", () => {
    const line = `1${" -".repeat(1 << 19)}x`;
    expect(maskCardNumbers(line)).toBe(line);
    const spaced = "4 ".repeat(1 << 18);
    expect(maskCardNumbers(spaced).replaceAll(/[ *]/g, "")).toBe("44444444");
  });
});

describe("card numbers written with other separators, raw or percent-encoded", () => {
  // Every separator a person reads between digit groups, as sent in a query string (issue: the masker
  // caught plain and dash-separated digits only).
  const separators = [
    " ",
    "+",
    ".",
    "_",
    ",",
    "-",
    "/",
    "\t",
    "\n",
    "\u00a0",
    "%20",
    "%2D",
    "%2d",
    "%2F",
    "%09",
    "%0A",
    "%0D",
    "%2B",
    "%2C",
    "%2E",
    "%5F",
    "%C2%A0",
  ];
  for (const sep of separators) {
    it(`masks 4783${sep}6493${sep}0881${sep}5991`, () => {
      const number = ["4783", "6493", "0881", "5991"].join(sep);
      const masked = maskCardNumbers(`GET /v1/merchants?status=${number}&limit=2`);
      expect(masked).toBe(`GET /v1/merchants?status=${["4783", "****", "****", "5991"].join(sep)}&limit=2`);
      expect(masked.replace(/[^0-9]/g, "")).not.toContain("64930881");
    });
  }

  it("never counts the digits of a percent escape as digits of the number", () => {
    expect(maskPan("4242%204242%204242%204242")).toBe("4242%20****%20****%204242");
  });

  it("takes any run of separators between digits (issue 35 item 2: runs of several)", () => {
    expect(maskCardNumbers("4242 - 4242 - 4242 - 4242")).toBe("4242 - **** - **** - 4242");
    expect(maskCardNumbers("id 1234 ,   5678 ,   9012")).toBe("id 1234 ,   **** ,   9012");
    expect(maskCardNumbers("4242 -- // -- 4242    4242\n\n\n4242")).toBe("4242 -- // -- ****    ****\n\n\n4242");
  });

  it("masks a number in a path segment", () => {
    expect(maskCardNumbers("/v1/tokens/4242424242424242/reveal")).toBe("/v1/tokens/4242********4242/reveal");
  });

  it("leaves short dotted and comma-separated numbers alone", () => {
    for (const text of ["203.0.113.7", "v1.2.3", "1,000,000.00", "2026/11/22", "a_1_2_3"]) {
      expect(maskCardNumbers(text)).toBe(text);
    }
  });
});

describe("displayUrl", () => {
  it("decodes the path and query, then masks", () => {
    expect(displayUrl("/v1/merchants?status=4783+6493+0881+5991", 1024)).toBe(
      "/v1/merchants?status=4783 **** **** 5991",
    );
    expect(displayUrl("/v1/x/4242%C2%A04242%C2%A04242%C2%A04242", 1024)).toBe(
      "/v1/x/4242\u00a0****\u00a0****\u00a04242",
    );
    expect(displayUrl("/v1/x?q=%E0%A4%A", 1024)).toBe("/v1/x?q=%E0%A4%A"); // malformed escape: kept raw
  });

  it("masks a number in a malformed URL too, decoding the escapes that are well formed", () => {
    expect(displayUrl("/v1/x?q=%E0%A4%A&card=4242%204242%204242%204242", 1024)).toBe(
      "/v1/x?q=%E0%A4%A&card=4242 **** **** 4242",
    );
    // A lone byte that is not UTF-8 does not keep the ASCII escapes around it encoded.
    expect(displayUrl("/v1/x?q=%FF%5F&k=key%5Ftest%5FHn1Eqkt6efRlpzz19VZbT0WC4eJBTRk6", 1024)).toBe(
      "/v1/x?q=%FF_&k=key_test_Hn1E…",
    );
  });

  it("masks every credential in a path and a query, encoded or not", () => {
    expect(displayUrl("/v1/merchants?starting_after=key_live_4fQxT2mB7rLp1WcYd8sNaZkT9QwErTy7", 1024)).toBe(
      "/v1/merchants?starting_after=key_live_4fQx…",
    );
    expect(displayUrl("/v1/cards/whsec%5F9Kd2Lp7Qw4Er1Ty6Ui3Op8As5Df0GhJk?x=1", 1024)).toBe(
      "/v1/cards/whsec_9Kd2…?x=1",
    );
  });

  it("cuts long URLs after masking, so a cut never uncovers digits", () => {
    const url = `/v1/merchants?x=${"a".repeat(5000)}`;
    const shown = displayUrl(url, 1024);
    expect(shown).toHaveLength(1024);
    expect(shown.endsWith("…")).toBe(true);
    expect(displayUrl("/v1/x?card=4242424242424242", 16)).toBe("/v1/x?card=4242…");
    // Exactly the limit: shown whole.
    expect(displayUrl("/v1/x?card=4242424242424242", 27)).toBe("/v1/x?card=4242********4242");
  });
});

describe("maskCredentials", () => {
  // One of each credential shape this API issues (kernel/mask.ts, CREDENTIAL).
  const shapes = [
    ["a sandbox service-key secret", "key_test_Hn1Eqkt6efRlpzz19VZbT0WC4eJBTRk6", "key_test_Hn1E…"],
    ["a production service-key secret", "key_live_4fQxT2mB7rLp1WcYd8sNaZkT9QwErTy7", "key_live_4fQx…"],
    ["a webhook signing secret", "whsec_9Kd2Lp7Qw4Er1Ty6Ui3Op8As5Df0GhJk", "whsec_9Kd2…"],
    ["a console session token", "csess_Zt4k9QwErTy7UiOp3AsDf5GhJkLz8Xc2Vb6Nm1Qw5E", "csess_Zt4k…"],
    [
      "a hosted-page token",
      "v1.1763724135.Tb3kR9mQ2xW7pL4c.Jr5Xq0cW2v8tKn1bY6zHf3uLd9gSe4aPoM7iNwQxRk",
      "v1.1763724135.Tb3k…",
    ],
  ] as const;

  for (const [what, secret, shown] of shapes) {
    it(`masks ${what} to its type and first four characters, wherever it stands`, () => {
      expect(maskCredentials(secret)).toBe(shown);
      expect(maskCredentials(`GET /v1/merchants?api_key=${secret}&limit=1`)).toBe(
        `GET /v1/merchants?api_key=${shown}&limit=1`,
      );
      expect(maskCredentials(`/v1/merchants/${secret}/balance`)).toBe(`/v1/merchants/${shown}/balance`);
      expect(maskCredentials(`{"authorization":"Bearer ${secret}","cookie":"payments_console=${secret}"}`)).toBe(
        `{"authorization":"Bearer ${shown}","cookie":"payments_console=${shown}"}`,
      );
      // Idempotent: what was masked stays as it is.
      expect(maskCredentials(shown)).toBe(shown);
    });
  }

  it("shows none of a page token's nonce when its digits would join the expiry's into a card-number run", () => {
    const token = "v1.1795507037.8uDKR9mQ2xW7pL4c.Jr5Xq0cW2v8tKn1bY6zHf3uLd9gSe4aPoM7iNwQxRk";
    expect(maskCredentials(token)).toBe("v1.1795507037.…");
    expect(maskSensitive(`GET /v1/merchants?t=${token}&n=1`)).toBe("GET /v1/merchants?t=v1.1795507037.…&n=1");
    // A letter first: the run stops at the expiry, and four characters show as for every credential.
    expect(maskSensitive("v1.1795507037.u8DKR9mQ2xW7pL4c.Jr5Xq0cW2v8")).toBe("v1.1795507037.u8DK…");
  });

  it("masks a secret whose underscores are still percent-encoded (raw text, or a URL encoded twice)", () => {
    expect(maskCredentials("key%5Ftest%5FHn1Eqkt6efRlpzz19VZbT0WC4eJBTRk6")).toBe("key%5Ftest%5FHn1E…");
    expect(displayUrl("/v1/x?k=whsec%255F9Kd2Lp7Qw4Er1Ty6Ui3Op8As5Df0GhJk", 1024)).toBe("/v1/x?k=whsec%5F9Kd2…");
  });

  it("masks a secret cut short or lengthened, and hides how long it was", () => {
    expect(maskCredentials("key_test_abcdef")).toBe("key_test_abcd…");
    expect(maskCredentials(`key_live_${"x".repeat(200)}`)).toBe("key_live_xxxx…");
    expect(maskCredentials("key_test_ab")).toBe("key_test_ab");
  });

  it("leaves ids, listed key prefixes and ordinary words alone", () => {
    const untouched = [
      "kid_2Bn8VcXz4LkJh6GfDs1QaWe3",
      "we_3Fg7Hj2Kl9Zx4Cv8Bn1Mq6Wa",
      '"key_prefix":"key_test_abcd"',
      "key_test_",
      "whsec_",
      "the key_test_ prefix marks a sandbox key",
      "node v1.20.3",
      "v1.1763724135.short",
    ];
    for (const text of untouched) expect(maskCredentials(text)).toBe(text);
  });
});

describe("maskSensitive", () => {
  it("masks credentials and card numbers together", () => {
    expect(maskSensitive("key=key_test_Hn1Eqkt6efRlpzz19VZbT0WC4eJBTRk6&card=4242424242424242")).toBe(
      "key=key_test_Hn1E…&card=4242********4242",
    );
  });

  it("masks a credential whose random part holds a long run of digits as a whole", () => {
    // Card masking first would star the digits and leave the letters after them in clear.
    expect(maskSensitive("key_test_ab123456789012345678cdEFGHijklmnopqr")).toBe("key_test_ab12…");
  });
});
