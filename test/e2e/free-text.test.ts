import { COLLECTIONS } from "@payments/server";
import { CARD_WRITINGS, CREDENTIAL_WRITINGS, partsOf } from "@payments/server/hostile-writings";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CARD_TEXTS, FREE_TEXT_FIELDS, type Operation, valueFor, withTextAt } from "../support/free-text.ts";
import { RECIPES } from "../support/recipes.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { clientFor } from "./fixtures.ts";

// Card numbers go only where a card number is asked for (spec/main.tsp; docs/api.md "What is masked and
// what is refused"): every free-text field of every operation refuses a Luhn-valid run of 13 to 19
// digits with 400 `card_number_in_text` naming the field, and nothing of the request is kept: no
// object, no event, not even its Idempotency-Key. Text that only looks numeric passes.

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

function send(op: Operation, path: Record<string, string>, body: unknown, headers: Record<string, string> = {}) {
  const url = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(path[name] ?? ""));
  return fetch(`${server.url}${url}`, {
    method: op.method.toUpperCase(),
    headers: { authorization: `Bearer ${server.sandboxKey}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

/** How many documents each collection holds, except the request log (it records every request's path). */
async function counts(): Promise<Record<string, number>> {
  const names = Object.keys(COLLECTIONS).filter((name) => name !== "request_log");
  const store = server.running.store as unknown as { findAll(c: string, w: object): Promise<unknown[]> };
  return Object.fromEntries(await Promise.all(names.map(async (n) => [n, (await store.findAll(n, {})).length])));
}

it("covers every free-text field the contract marks", () => {
  // The fields the issue names, at least: names, descriptions, metadata, holders, e-mails, list items.
  const fields = new Set(FREE_TEXT_FIELDS.map(({ op, field }) => `${op.operationId} ${field}`));
  for (const expected of [
    "createMerchant name",
    "createMerchant metadata.*",
    "createMerchant metadata.{key}",
    "createCharge description",
    "createCharge customer.email",
    "createToken holder",
    "payPaymentLink payment_method.holder",
    "createFraudListItem value",
    "createServiceKey name",
    "createWebhookEndpoint url",
  ]) {
    expect(fields).toContain(expected);
  }
});

describe.each(
  FREE_TEXT_FIELDS.map(({ op, field }, i) => ({ op, field, card: CARD_TEXTS[i % CARD_TEXTS.length] as string })),
)("$op.operationId: $field", ({ op, field, card }) => {
  it(`refuses ${card} with 400 card_number_in_text naming the field, and keeps nothing`, async () => {
    const client = clientFor(server, server.sandboxKey);
    const recipe = await RECIPES[op.operationId]({ server, client, live: false });
    const before = await counts();
    const idempotencyKey = `free-text-${op.operationId}-${field}`;
    const body = withTextAt(op, recipe.body, field, valueFor(op, field, card));
    const res = await send(op, recipe.path, body, op.method === "post" ? { "idempotency-key": idempotencyKey } : {});
    const text = await res.text();
    expect(res.status, text).toBe(400);
    const problem = JSON.parse(text);
    expect(problem.code).toBe("card_number_in_text");
    // The field by its dotted path; a map's value by its key, a map's key by the map.
    const named = field.replace(".*", ".note").replace(".{key}", "");
    expect(problem.param).toBe(named);
    expect(problem.errors).toContainEqual({
      param: named,
      code: "invalid_value",
      message: expect.stringMatching(/card number/),
    });
    expect(text).not.toContain(card);
    expect(await counts()).toEqual(before);
    if (op.method === "post") {
      // The key was never claimed: the same key with a clean body runs (and is not a 422 reuse).
      const clean = await send(op, recipe.path, recipe.body ?? {}, { "idempotency-key": idempotencyKey });
      expect(clean.status, await clean.text()).toBeLessThan(300);
    }
  });
});

describe("text that only looks numeric", () => {
  it("is accepted: phone numbers, dates, amounts, references, numbers that fail the Luhn check", async () => {
    const client = clientFor(server, server.sandboxKey);
    const texts = [
      "+55 11 91234 5678",
      "Call +1 415 555 0100 on 2026-11-24 at 10:30",
      "Invoice 2026-000123, 1,234,567.89 USD",
      "Card ending 4242, ref 42424242424242420000",
      "4242 4242 4242 4241",
    ];
    for (const text of texts) {
      const { data, response } = await client.POST("/v1/merchants", { body: { name: text, metadata: { note: text } } });
      expect(response.status, text).toBe(201);
      expect(data?.name).toBe(text);
    }
  });

  it("the card field of POST /v1/tokens still takes a card number", async () => {
    const client = clientFor(server, server.sandboxKey);
    const { response } = await client.POST("/v1/tokens", {
      body: { card: "4242 4242 4242 4242", holder: "Ada Lovelace", exp_month: 12, exp_year: 2031 },
    });
    expect(response.status).toBe(200);
  });
});

describe("every writing of a card number (issue 35 item 2)", () => {
  it.each(CARD_WRITINGS)("$name: refused in a merchant's name and in a metadata value", async ({ text }) => {
    for (const body of [{ name: `Order #1042, ${text}` }, { name: "Acme", metadata: { note: text } }]) {
      const res = await fetch(`${server.url}/v1/merchants`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.sandboxKey}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const answer = await res.text();
      expect(res.status, answer).toBe(400);
      expect(JSON.parse(answer).code).toBe("card_number_in_text");
    }
  });
});

describe("every refused writing of a secret (issue 35 item 6)", () => {
  const secrets = () => [server.sandboxKey, "whsec_9Kd2Lp7Qw4Er1Ty6Ui3Op8As5Df0GhJk"];
  it.each(CREDENTIAL_WRITINGS.filter((w) => w.refused))(
    "$name: refused in a merchant's name and a webhook endpoint's URL",
    async ({ write }) => {
      for (const secret of secrets()) {
        const written = write(secret);
        for (const [path, body] of [
          ["/v1/merchants", { name: `Acme ${written}` }],
          [
            "/v1/webhook_endpoints",
            { url: `https://shop.example/hooks?k=${encodeURIComponent(written)}`, enabled_events: ["*"] },
          ],
        ] as const) {
          const res = await fetch(`${server.url}${path}`, {
            method: "POST",
            headers: { authorization: `Bearer ${server.sandboxKey}`, "content-type": "application/json" },
            body: JSON.stringify(body),
          });
          const answer = await res.text();
          expect(res.status, `${path} ${written}: ${answer}`).toBe(400);
          expect(JSON.parse(answer).code).toBe("secret_in_text");
          expect(answer).not.toContain(partsOf(secret).random.slice(4));
        }
      }
    },
  );

  it("text that only mentions a key's marker is accepted", async () => {
    const client = clientFor(server, server.sandboxKey);
    for (const text of ["the key_test_ prefix marks a sandbox key", "key_test_results for monday"]) {
      const { response } = await client.POST("/v1/merchants", { body: { name: text } });
      expect(response.status, text).toBe(201);
    }
  });
});
