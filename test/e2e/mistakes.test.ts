import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/server.ts";
import { clientFor, createMerchant, createToken } from "./fixtures.ts";

// Common mistakes, each sent to a real server as a person would make it, and what the answer says about
// it (docs/api.md "Errors"): every item of `errors[]` names its field (`param`), says what is wrong as a
// code (FieldErrorCode, spec/common/problems.tsp) and in words a person would write, and `detail` reads
// them as sentences. The words are asserted whole, so a change to what people read is a change here.

interface Mistake {
  /** What the person did. */
  name: string;
  method?: string;
  path: string;
  /** A JSON body (sent as application/json), or the raw text and headers of an odd request. */
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
  status?: number;
  /** Every item of errors[], in order: [param, code, message]. */
  errors?: [string, string, string][];
  detail?: string;
}

interface Fixtures {
  merchant: string;
  token: string;
}

const CARD = "4242424242424242";

/** A charge the contract allows, with the change a mistake makes to it. */
const charge = (f: Fixtures, change: Record<string, unknown> = {}) => ({
  merchant_id: f.merchant,
  amount: 2500,
  currency: "USD",
  payment_method: { type: "card", token: f.token },
  ...change,
});

const card = { card: CARD, holder: "Ada Lovelace", exp_month: 12, exp_year: 2031, cvc: "123" };

const ID = "`mch_` followed by 24 letters and digits, such as `mch_4fQx9ZkT2mB7rLp1WcYd8sNa`";
const TOKENIZE = "tokenize the card first with POST /v1/tokens";
const TYPES = "`card`, `pix`, `boleto`, `oxxo`, `spei` or `sepa_debit`";

const MISTAKES = (f: Fixtures): Mistake[] => [
  // Merchants
  {
    name: "a misspelt field name",
    path: "/v1/merchants",
    body: { nme: "Acme" },
    errors: [
      ["nme", "unknown_field", "unknown field `nme`; did you mean `name`?"],
      ["name", "missing", "is required"],
    ],
    detail: "Unknown field `nme`; did you mean `name`? `name` is required.",
  },
  {
    name: "a field name in camelCase",
    path: "/v1/charges",
    body: { merchantId: f.merchant, amount: 2500, currency: "USD", payment_method: { type: "card", token: f.token } },
    errors: [
      ["merchantId", "unknown_field", "unknown field `merchantId`; did you mean `merchant_id`?"],
      ["merchant_id", "missing", "is required"],
    ],
  },
  {
    name: "an empty name",
    path: "/v1/merchants",
    body: { name: "" },
    errors: [["name", "too_short", "must not be empty"]],
    detail: "`name` must not be empty.",
  },
  {
    name: "a number for a name",
    path: "/v1/merchants",
    body: { name: 42 },
    errors: [["name", "invalid_type", "must be a string"]],
  },
  {
    name: "a status that does not exist",
    path: "/v1/merchants",
    body: { name: "Acme", status: "activ" },
    errors: [["status", "invalid_value", "must be one of `active` or `suspended`; did you mean `active`?"]],
  },
  {
    name: "a metadata key with a dot",
    path: "/v1/merchants",
    body: { name: "Acme", metadata: { "order.id": "1042" } },
    errors: [
      [
        "metadata",
        "invalid_format",
        "has a key it cannot take (`order.id`): each key must be a key of 1 to 40 characters without a dot or a NUL character, not starting with `$`",
      ],
    ],
  },
  {
    name: "a number as a metadata value",
    path: "/v1/merchants",
    body: { name: "Acme", metadata: { order: 1042 } },
    errors: [["metadata.order", "invalid_type", "must be a string"]],
  },
  {
    name: "an id that is not a merchant's",
    method: "GET",
    path: "/v1/merchants/acme",
    errors: [["id", "invalid_format", `must be a merchant id: ${ID}`]],
    detail: `\`id\` must be a merchant id: ${ID}.`,
  },
  {
    name: "a page larger than allowed",
    method: "GET",
    path: "/v1/merchants?limit=1000",
    errors: [["limit", "too_large", "must be at most 100"]],
  },
  {
    name: "a page of none",
    method: "GET",
    path: "/v1/merchants?limit=0",
    errors: [["limit", "too_small", "must be at least 1"]],
  },
  {
    name: "a page size in words",
    method: "GET",
    path: "/v1/merchants?limit=ten",
    errors: [["limit", "invalid_type", "must be a whole number"]],
  },
  {
    name: "a misspelt query parameter",
    method: "GET",
    path: "/v1/merchants?limt=5",
    errors: [["limt", "unknown_field", "unknown query parameter `limt`; did you mean `limit`?"]],
    detail: "Unknown query parameter `limt`; did you mean `limit`?",
  },
  {
    name: "an empty filter",
    method: "GET",
    path: "/v1/merchants?status=",
    errors: [["status", "invalid_value", "must not be empty: leave the parameter out instead"]],
  },
  {
    name: "a filter value that does not exist",
    method: "GET",
    path: "/v1/merchants?status=open",
    errors: [["status", "invalid_value", "must be one of `active`, `suspended` or `closed`"]],
  },
  {
    name: "a trailing slash",
    method: "GET",
    path: "/v1/merchants/",
    status: 404,
    detail: "No route GET /v1/merchants/: paths have no trailing slash (did you mean /v1/merchants?).",
  },
  {
    name: "null for a name that cannot be removed",
    method: "PATCH",
    path: `/v1/merchants/${f.merchant}`,
    body: { name: null },
    errors: [["name", "invalid_type", "must be a string"]],
  },

  // Tokens
  {
    name: "too few digits for a card number",
    path: "/v1/tokens",
    body: { ...card, card: "4242" },
    errors: [
      [
        "card",
        "invalid_format",
        "must be a card number of 12 to 19 digits (spaces or dashes may separate groups of digits)",
      ],
    ],
  },
  {
    name: "a thirteenth month",
    path: "/v1/tokens",
    body: { ...card, exp_month: 13 },
    errors: [["exp_month", "too_large", "must be at most 12"]],
  },
  {
    name: "a year in quotes",
    path: "/v1/tokens",
    body: { ...card, exp_year: "2031" },
    errors: [["exp_year", "invalid_type", "must be a whole number, written without quotes"]],
    detail: "`exp_year` must be a whole number, written without quotes.",
  },
  {
    name: "a two-digit year",
    path: "/v1/tokens",
    body: { ...card, exp_year: 31 },
    errors: [["exp_year", "too_small", "must be at least 2000"]],
  },
  {
    name: "a two-digit security code",
    path: "/v1/tokens",
    body: { ...card, cvc: "12" },
    errors: [["cvc", "invalid_format", "must be 3 digits, or 4 for American Express, such as `123`"]],
  },
  {
    name: "no cardholder",
    path: "/v1/tokens",
    body: { card: CARD, exp_month: 12, exp_year: 2031 },
    errors: [["holder", "missing", "is required"]],
  },
  {
    name: "the card number under another name",
    path: "/v1/tokens",
    body: { number: CARD, holder: "Ada Lovelace", exp_month: 12, exp_year: 2031 },
    errors: [
      [
        "number",
        "unknown_field",
        "unknown field `number`; this request takes `card`, `holder`, `exp_month`, `exp_year` and `cvc`",
      ],
      ["card", "missing", "is required"],
    ],
  },

  // Charges
  {
    name: "a currency in lower case",
    path: "/v1/charges",
    body: charge(f, { currency: "usd" }),
    errors: [
      ["currency", "invalid_format", "must be a three-letter ISO 4217 currency code in capitals, such as `USD`"],
    ],
    detail: "`currency` must be a three-letter ISO 4217 currency code in capitals, such as `USD`.",
  },
  {
    name: "a raw card number in the payment method",
    path: "/v1/charges",
    body: charge(f, { payment_method: { type: "card", number: CARD } }),
    errors: [
      [
        "payment_method.number",
        "token_required",
        `looks like a card number, which this request never takes: ${TOKENIZE} and send the token's \`id\` as \`payment_method.token\``,
      ],
    ],
    detail: `\`payment_method.number\` looks like a card number, which this request never takes: ${TOKENIZE} and send the token's \`id\` as \`payment_method.token\`.`,
  },
  {
    name: "a card number as the payment method",
    path: "/v1/charges",
    body: charge(f, { payment_method: "4242 4242 4242 4242" }),
    errors: [
      [
        "payment_method",
        "token_required",
        `must be an object such as {"type": "card", "token": "tok_…"}, never a card number: ${TOKENIZE} and send the token's \`id\` as \`payment_method.token\``,
      ],
    ],
  },
  {
    name: "a card number as the token",
    path: "/v1/charges",
    body: charge(f, { payment_method: { type: "card", token: CARD } }),
    errors: [
      [
        "payment_method.token",
        "token_required",
        `must be a token's id (\`tok_…\`), never a card number: ${TOKENIZE} and send the token's \`id\` here`,
      ],
    ],
  },
  {
    name: "card details beside the payment method",
    path: "/v1/charges",
    body: charge(f, { card: { number: CARD, exp_month: 12, exp_year: 2031 } }),
    errors: [
      [
        "card",
        "token_required",
        `looks like a card number, which this request never takes: ${TOKENIZE} and send the token's \`id\` as \`payment_method.token\``,
      ],
    ],
  },
  {
    name: "a payment method type that does not exist",
    path: "/v1/charges",
    body: charge(f, { payment_method: { type: "cards", token: f.token } }),
    errors: [["payment_method.type", "invalid_value", `must be one of ${TYPES}; did you mean \`card\`?`]],
  },
  {
    name: "a payment method without its type",
    path: "/v1/charges",
    body: charge(f, { payment_method: { token: f.token } }),
    errors: [["payment_method.type", "missing", `is required: one of ${TYPES}`]],
  },
  {
    name: "a SEPA debit with a lower-case IBAN and no account holder",
    path: "/v1/charges",
    body: charge(f, { currency: "EUR", payment_method: { type: "sepa_debit", iban: "de89370400440532013000" } }),
    errors: [
      ["payment_method.account_holder", "missing", "is required"],
      [
        "payment_method.iban",
        "invalid_format",
        "must be an IBAN in capitals: a two-letter country code, two check digits, then 11 to 30 letters or digits (spaces allowed)",
      ],
    ],
  },
  {
    name: "a field of another payment method",
    path: "/v1/charges",
    body: charge(f, { payment_method: { type: "pix", token: f.token } }),
    errors: [
      ["payment_method.token", "unknown_field", "unknown field `payment_method.token`; `payment_method` takes `type`"],
    ],
  },
  {
    name: "an amount with decimals",
    path: "/v1/charges",
    body: charge(f, { amount: 25.5 }),
    errors: [["amount", "invalid_type", "must be a whole number"]],
  },
  {
    name: "an amount of zero",
    path: "/v1/charges",
    body: charge(f, { amount: 0 }),
    errors: [["amount", "too_small", "must be at least 1"]],
  },
  {
    name: "an amount in quotes",
    path: "/v1/charges",
    body: charge(f, { amount: "2500" }),
    errors: [["amount", "invalid_type", "must be a whole number, written without quotes"]],
  },
  {
    name: "a merchant's name instead of its id",
    path: "/v1/charges",
    body: charge(f, { merchant_id: "Acme Coffee" }),
    errors: [["merchant_id", "invalid_format", `must be a merchant id: ${ID}`]],
  },
  {
    name: "a customer e-mail without a domain",
    path: "/v1/charges",
    body: charge(f, { customer: { email: "ada" } }),
    errors: [["customer.email", "invalid_format", "must be an e-mail address, such as `ada@example.com`"]],
  },
  {
    name: "a customer country in lower case",
    path: "/v1/charges",
    body: charge(f, { customer: { country: "br" } }),
    errors: [
      ["customer.country", "invalid_format", "must be a two-letter ISO 3166-1 country code in capitals, such as `BR`"],
    ],
  },
  {
    name: "a customer field that does not exist",
    path: "/v1/charges",
    body: charge(f, { customer: { phone: "+44 20 7946 0000" } }),
    errors: [
      [
        "customer.phone",
        "unknown_field",
        "unknown field `customer.phone`; `customer` takes `email`, `ip` and `country`",
      ],
    ],
  },
  {
    name: "capture as a word",
    path: "/v1/charges",
    body: charge(f, { capture: "yes" }),
    errors: [["capture", "invalid_type", "must be `true` or `false`"]],
  },
  {
    name: "a description over the limit",
    path: "/v1/charges",
    body: charge(f, { description: "x".repeat(1001) }),
    errors: [["description", "too_long", "must be at most 1000 characters long"]],
  },
  {
    name: "a refund reason that does not exist",
    path: "/v1/charges/tx_9Lm2QwErTy7UiOp3AsDf5GhJ/refunds",
    body: { reason: "customer_request" },
    errors: [["reason", "invalid_value", "must be one of `requested_by_customer`, `duplicate` or `fraudulent`"]],
  },

  // Other resources
  {
    name: "a scope that does not exist",
    path: "/v1/service_keys",
    body: { name: "backend", scopes: ["charge"] },
    errors: [
      [
        "scopes.0",
        "invalid_value",
        "must be one of `*`, `merchants`, `tokenization`, `vault`, `charges`, `payment_links`, `cashouts`, `fraud` or `webhooks`; did you mean `charges`?",
      ],
    ],
  },
  {
    name: "a key with no scopes",
    path: "/v1/service_keys",
    body: { name: "backend", scopes: [] },
    errors: [["scopes", "too_short", "must not be empty"]],
  },
  {
    name: "an expiry date without a time",
    path: "/v1/service_keys",
    body: { name: "backend", scopes: ["charges"], expires_at: "2031-12-31" },
    errors: [
      [
        "expires_at",
        "invalid_format",
        "must be a date and time in RFC 3339 form with its offset, such as `2026-12-31T23:59:59Z`",
      ],
    ],
  },
  {
    name: "a webhook address without its scheme",
    path: "/v1/webhook_endpoints",
    body: { url: "example.com/hooks", enabled_events: ["*"] },
    errors: [
      ["url", "invalid_format", "must be an absolute address with its scheme, such as `https://example.com/webhooks`"],
    ],
  },
  {
    name: "a redirect after payment without its scheme",
    path: "/v1/payment_links",
    body: {
      merchant_id: f.merchant,
      amount: 2500,
      currency: "USD",
      description: "Order #1042",
      after_completion: { type: "redirect", url: "shop.example/thanks" },
    },
    errors: [
      [
        "after_completion.url",
        "invalid_format",
        "must be an http or https address without spaces, such as `https://shop.example/thanks`",
      ],
    ],
  },
  {
    name: "a card number in a fraud evaluation",
    path: "/v1/fraud/evaluations",
    body: { amount: 2500, currency: "USD", card: { number: CARD } },
    errors: [
      [
        "card.number",
        "token_required",
        `looks like a card number, which this request never takes: ${TOKENIZE} and send the token's \`id\` as \`card.token\``,
      ],
    ],
  },
  {
    name: "a BIN of four digits",
    path: "/v1/fraud/evaluations",
    body: { amount: 2500, currency: "USD", card: { bin: "4242" } },
    errors: [["card.bin", "invalid_format", "must be the first 6 to 8 digits of a card number, such as `424242`"]],
  },

  // The request itself
  {
    name: "JSON with a trailing comma",
    path: "/v1/merchants",
    raw: '{"name": "Acme",}',
    errors: [
      ["body", "invalid_json", "is not valid JSON (Expected double-quoted property name in JSON at position 16)"],
    ],
  },
  {
    name: "an array for a body",
    path: "/v1/merchants",
    body: [{ name: "Acme" }],
    errors: [["body", "invalid_type", "must be an object"]],
  },
  {
    name: "a body where none is taken",
    path: "/v1/charges/tx_9Lm2QwErTy7UiOp3AsDf5GhJ/void",
    body: { reason: "duplicate" },
    errors: [["body", "body_not_allowed", "must be empty (or `{}`): this operation takes no request body"]],
    detail: "This operation takes no request body: send none, or `{}`.",
  },
  {
    name: "an Idempotency-Key over 255 characters",
    path: "/v1/merchants",
    body: { name: "Acme" },
    headers: { "idempotency-key": "k".repeat(300) },
    errors: [["Idempotency-Key", "too_long", "must be at most 255 characters long"]],
  },
  {
    name: "a form body (curl -d without a Content-Type)",
    path: "/v1/merchants",
    raw: "name=Acme",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    status: 415,
    detail:
      "The request body must be JSON: send it with `Content-Type: application/json`. This request sent a form (`application/x-www-form-urlencoded`, what `curl -d` sends unless told otherwise).",
  },
  {
    name: "a body without a Content-Type",
    path: "/v1/merchants",
    raw: '{"name": "Acme"}',
    headers: { "content-type": "" },
    status: 415,
    detail:
      "The request body must be JSON: send it with `Content-Type: application/json`. This request did not say what its body is (no Content-Type header).",
  },
];

const body = (m: Mistake) => m.raw ?? (m.body === undefined ? undefined : JSON.stringify(m.body));

/** One request with exactly these headers (fetch would add a Content-Type to a body sent without one). */
function send(url: string, method: string, headers: Record<string, string>, text: string | undefined) {
  return new Promise<{ status: number; contentType: string; text: string }>((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let answer = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        answer += chunk;
      });
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, contentType: String(res.headers["content-type"]), text: answer }),
      );
    });
    req.on("error", reject);
    req.end(text);
  });
}

describe("common mistakes, and what the answer says about them", () => {
  let server: TestServer;
  let fixtures: Fixtures;

  beforeAll(async () => {
    server = await startTestServer();
    const client = clientFor(server, server.sandboxKey);
    fixtures = { merchant: (await createMerchant(client)).id, token: (await createToken(client)).id };
  });
  afterAll(() => server.close());

  /** The table's rows, built once the fixtures exist (the names, for the test titles, need none). */
  const rows = MISTAKES({ merchant: "mch_4fQx9ZkT2mB7rLp1WcYd8sNa", token: "tok_7Hs2KdP9qLm3XvB8nRt5YwZc" });

  it("covers at least forty mistakes, each once", () => {
    expect(rows.length).toBeGreaterThanOrEqual(40);
    expect(new Set(rows.map((r) => r.name)).size).toBe(rows.length);
  });

  rows.forEach(({ name }, index) => {
    it(name, async () => {
      const mistake = MISTAKES(fixtures)[index] as Mistake;
      const headers: Record<string, string> = { authorization: `Bearer ${server.sandboxKey}` };
      if (mistake.body !== undefined || mistake.raw !== undefined) headers["content-type"] = "application/json";
      for (const [header, value] of Object.entries(mistake.headers ?? {})) {
        if (value === "") delete headers[header];
        else headers[header] = value;
      }
      const res = await send(`${server.url}${mistake.path}`, mistake.method ?? "POST", headers, body(mistake));
      const problem = JSON.parse(res.text);
      expect(res.status, res.text).toBe(mistake.status ?? 400);
      expect(res.contentType).toMatch(/^application\/problem\+json/);
      if (mistake.errors) {
        expect(problem.errors).toEqual(mistake.errors.map(([param, code, message]) => ({ param, code, message })));
        expect(problem.param).toBe(mistake.errors[0]?.[0]);
      } else {
        expect(problem.errors).toBeUndefined();
      }
      if (mistake.detail) expect(problem.detail).toBe(mistake.detail);
      // No answer repeats a card number the request carried.
      expect(JSON.stringify(problem)).not.toContain(CARD);
    });
  });
});
