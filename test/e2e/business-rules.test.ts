import { OPERATIONS } from "@payments/contract/operations";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadContract } from "../support/openapi.ts";
import { type Env, RECIPES } from "../support/recipes.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { cardPayment, clientFor, createMerchant, createPaymentLink, pageTokenOf } from "./fixtures.ts";

// The rules no schema can state, listed in each operation's 400 description (spec/scripts/generate.mjs,
// businessRules: `x-400-rules`, and the cursor rule of every list operation). For every rule, a request
// the document's schemas accept but the rule refuses: the server answers 400, and the field its `param`
// names is one the operation's 400 description lists. Every rule listed has such a request here.

type Request = { path: Record<string, string>; query?: Record<string, string>; body?: unknown };
type Break = (env: Env, valid: Request) => Promise<Request> | Request;

const contract = loadContract();
type Op = (typeof OPERATIONS)[number];

/** The rules an operation's 400 description lists, by the field each names first. */
function rulesOf(op: Op): Map<string, string> {
  const method = contract.document.paths[op.path]?.[op.method] as {
    responses?: Record<string, { description?: string }>;
  };
  const text = method?.responses?.["400"]?.description ?? "";
  const [, list = ""] = text.split("Beyond its schema, this operation refuses with a 400 naming the field:");
  const rules = new Map<string, string>();
  for (const line of list.split("\n")) {
    const field = /^- `([^`]+)`/.exec(line)?.[1];
    if (field) rules.set(field, line);
  }
  return rules;
}

const IN_THE_PAST = "2020-01-01T00:00:00Z";

/** Per operation: the field of each listed rule, and how to break it from the operation's valid request. */
const BREAKS: Partial<Record<Op["operationId"], Record<string, Break>>> = {
  advanceSandboxClock: { to: () => ({ path: {}, body: { to: IN_THE_PAST } }) },
  createPaymentLink: {
    payment_methods: (_env, valid) => ({ ...valid, body: { ...(valid.body as object), payment_methods: ["pix"] } }),
  },
  payPaymentLink: {
    "payment_method.type": async ({ client, server }) => {
      const link = await createPaymentLink(client, { currency: "BRL", amount: 15_000, payment_methods: ["pix"] });
      return {
        path: { id: link.id },
        body: { page_token: await pageTokenOf(server, link.id), payment_method: cardPayment() },
      };
    },
  },
  captureCharge: { amount: (_env, valid) => ({ ...valid, body: { amount: 10_000_000 } }) },
  createCharge: {
    currency: async ({ client }) => ({
      path: {},
      body: {
        merchant_id: (await createMerchant(client)).id,
        amount: 15_000,
        currency: "USD",
        payment_method: { type: "pix" },
      },
    }),
  },
  updateFraudSettings: {
    review_threshold: () => ({ path: {}, body: { review_threshold: 90, block_threshold: 40 } }),
    request_3ds_threshold: () => ({ path: {}, body: { request_3ds_threshold: 80 } }),
  },
  createFraudEvaluation: { amount: () => ({ path: {}, body: { currency: "USD" } }) },
  setMerchantFeeSchedule: {
    override: (_env, valid) => ({ ...valid, body: { override: { card: { percent_bps: 100, fixed: { usd: 5 } } } } }),
  },
  createCashout: {
    currency: (_env, valid) => ({ ...valid, body: { ...(valid.body as object), currency: "EUR" } }),
    "destination.iban": (_env, valid) => ({
      ...valid,
      body: {
        ...(valid.body as object),
        currency: "EUR",
        destination: { type: "iban", iban: "DE00370400440532013000", account_holder: "Matrix GmbH" },
      },
    }),
  },
  createServiceKey: {
    expires_at: () => ({ path: {}, body: { name: "expired", scopes: ["merchants"], expires_at: IN_THE_PAST } }),
  },
  createWebhookEndpoint: {
    url: () => ({ path: {}, body: { url: "ftp://127.0.0.1/hooks", enabled_events: ["webhook_endpoint.test"] } }),
  },
};

/** Every list operation: both cursors at once. */
const bothCursors: Break = (_env, valid) => ({
  ...valid,
  query: { ...valid.query, starting_after: "evt_one", ending_before: "evt_two" },
});

const ruled = OPERATIONS.filter((op) => rulesOf(op).size > 0);

describe("rules the schema cannot state, as the 400 descriptions list them", () => {
  let server: TestServer;
  let env: Env;

  beforeAll(async () => {
    server = await startTestServer();
    env = { server, client: clientFor(server, server.sandboxKey), live: false };
  });
  afterAll(() => server?.close());

  it("lists rules for the operations that have them, each with a request that breaks it here", () => {
    expect(ruled.length).toBeGreaterThan(10);
    for (const op of ruled) {
      const breaks = {
        ...BREAKS[op.operationId],
        ...(rulesOf(op).has("starting_after") ? { starting_after: bothCursors } : {}),
      };
      expect(Object.keys(breaks).sort(), `${op.operationId}: one request per listed rule`).toEqual(
        [...rulesOf(op).keys()].sort(),
      );
    }
  });

  for (const op of ruled) {
    for (const field of rulesOf(op).keys()) {
      it(`${op.operationId}: ${field}`, async () => {
        const brk = field === "starting_after" ? bothCursors : BREAKS[op.operationId]?.[field];
        if (!brk) throw new Error(`no request breaks ${op.operationId}'s rule on ${field}`);
        const request = await brk(env, await RECIPES[op.operationId](env));
        if (request.body !== undefined) {
          expect(contract.checkRequestBody(op.method, op.path, request.body), "the schema accepts it").toEqual([]);
        }
        const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => request.path[name] ?? "");
        const url = new URL(`${server.url}${path}`);
        for (const [name, value] of Object.entries(request.query ?? {})) url.searchParams.set(name, value);
        const res = await fetch(url, {
          method: op.method.toUpperCase(),
          headers: {
            ...(op.public ? {} : { authorization: `Bearer ${server.sandboxKey}` }),
            ...(request.body === undefined ? {} : { "content-type": "application/json" }),
          },
          body: request.body === undefined ? undefined : JSON.stringify(request.body),
        });
        const problem = (await res.json()) as { param?: string };
        expect(res.status, JSON.stringify(problem)).toBe(400);
        const named = [...rulesOf(op).values()].some((line) => line.includes(`\`${problem.param}\``));
        expect(named, `${problem.param} is named among the rules of ${op.operationId}`).toBe(true);
      });
    }
  }
});
