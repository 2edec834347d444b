import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPENAPI_31_PATH } from "../support/openapi.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { clientFor, createMerchant } from "./fixtures.ts";

// Rules the document states (issue 34 item 5): each was a 400 the server gave to a request the released
// /v1 document (spec/released/v1.json, for the operations it has) allowed. For every rule, a request that breaks it is valid under
// the released document, invalid under today's, and refused by the server with a 400 that names the
// field and says what it expects; the request that keeps the rule is accepted (spec/scripts/breaking.mjs
// STATED_RULES lists these narrowings).

type Json = Record<string, unknown>;

const RELEASED_PATH = fileURLToPath(new URL("../../spec/released/v1.json", import.meta.url));

/** A document's schemas, compiled on demand: a query parameter's or a request body's. */
function schemasOf(path: string) {
  const doc = JSON.parse(readFileSync(path, "utf8")) as Json & { paths: Record<string, Record<string, Json>> };
  const id = `urn:stated-rules:${path}`;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, id);
  const segment = (s: string) => encodeURIComponent(s.replaceAll("~", "~0").replaceAll("/", "~1"));
  const operation = (method: string, route: string) => {
    const op = doc.paths[route]?.[method] as { parameters?: Json[] } | undefined;
    if (!op) throw new Error(`${method} ${route} is not in ${path}`);
    return op;
  };
  return {
    /** Whether the document has the operation. */
    has: (method: string, route: string) => doc.paths[route]?.[method] !== undefined,
    /** Whether the value is valid for the operation's query parameter. */
    query(method: string, route: string, name: string, value: string): boolean {
      const op = operation(method, route);
      const components = (doc.components as { parameters?: Record<string, Json> }).parameters ?? {};
      const index = (op.parameters ?? []).findIndex((p) => {
        const param = typeof p.$ref === "string" ? components[p.$ref.split("/").pop() as string] : p;
        return param?.in === "query" && param.name === name;
      });
      if (index < 0) throw new Error(`${method} ${route} has no query parameter ${name}`);
      const p = (op.parameters ?? [])[index] as Json;
      const pointer =
        typeof p.$ref === "string"
          ? `${p.$ref}/schema`
          : `#/paths/${segment(route)}/${method}/parameters/${index}/schema`;
      return ajv.validate({ $ref: `${id}${pointer}` }, value) as boolean;
    },
    /** Whether the body is valid for the operation's JSON request body. */
    body(method: string, route: string, body: unknown): boolean {
      operation(method, route);
      const pointer = `#/paths/${segment(route)}/${method}/requestBody/content/application~1json/schema`;
      return ajv.validate({ $ref: `${id}${pointer}` }, body) as boolean;
    },
  };
}

interface Rule {
  /** The rule, as a person would say it. */
  name: string;
  method: "get" | "post";
  route: string;
  /** The query parameter the rule is on, or the request body. */
  query?: { name: string; broken: string; kept: string };
  body?: { broken: Json; kept: Json };
  /** What the 400 says: errors[0]. */
  param: string;
  message: string;
}

const LINK = { amount: 2500, currency: "USD", description: "A mug" };

/** A well-formed merchant id standing for the merchant each run makes (send() puts the real one in). */
const STAND_IN_MERCHANT = "mch_4fQx9ZkT2mB7rLp1WcYd8sNa";

const RULES: Rule[] = [
  {
    name: "a cursor is not empty (starting_after)",
    method: "get",
    route: "/v1/merchants",
    query: { name: "starting_after", broken: "", kept: STAND_IN_MERCHANT },
    param: "starting_after",
    message: "must not be empty: leave the parameter out instead",
  },
  {
    name: "a cursor is not empty (ending_before)",
    method: "get",
    route: "/v1/merchants",
    query: { name: "ending_before", broken: "", kept: STAND_IN_MERCHANT },
    param: "ending_before",
    message: "must not be empty: leave the parameter out instead",
  },
  {
    name: "the events' type filter is not empty",
    method: "get",
    route: "/v1/events",
    query: { name: "type", broken: "", kept: "payment.captured" },
    param: "type",
    message: "must not be empty: leave the parameter out instead",
  },
  {
    name: "a merchant cannot be created closed",
    method: "post",
    route: "/v1/merchants",
    body: { broken: { name: "Gone Ltd", status: "closed" }, kept: { name: "Paused Ltd", status: "suspended" } },
    param: "status",
    message: "must be one of `active` or `suspended`",
  },
  {
    name: "a payment link lists each payment method once",
    method: "post",
    route: "/v1/payment_links",
    body: {
      broken: { ...LINK, payment_methods: ["card", "card"] },
      kept: { ...LINK, payment_methods: ["card"] },
    },
    param: "payment_methods",
    message: "must not list the same value twice",
  },
  {
    name: "a clock advance sends seconds or to, not both",
    method: "post",
    route: "/v1/sandbox/clock/advance",
    body: { broken: { seconds: 60, to: "2099-01-01T00:00:00Z" }, kept: { seconds: 60 } },
    param: "seconds",
    message: "and `to` cannot both be sent: send exactly one of them",
  },
  {
    name: "a clock advance sends one of seconds and to",
    method: "post",
    route: "/v1/sandbox/clock/advance",
    body: { broken: {}, kept: { seconds: 1 } },
    param: "seconds",
    message: "or `to` is required: send exactly one of them",
  },
];

describe("rules the document states", () => {
  const released = schemasOf(RELEASED_PATH);
  const current = schemasOf(OPENAPI_31_PATH);
  let server: TestServer;
  let merchant: string;

  beforeAll(async () => {
    server = await startTestServer();
    merchant = (await createMerchant(clientFor(server, server.sandboxKey))).id;
  });
  afterAll(() => server?.close());

  /** The request of a rule, broken or kept, as the server gets it. */
  async function send(rule: Rule, which: "broken" | "kept") {
    const url = new URL(`${server.url}${rule.route}`);
    // A cursor must name an object of the list (docs/api.md), so the kept request's stand-in merchant id
    // is the one made at run time.
    const value = rule.query?.[which] === STAND_IN_MERCHANT ? merchant : rule.query?.[which];
    if (rule.query && value !== undefined) url.searchParams.set(rule.query.name, value);
    const body = rule.body?.[which];
    const withMerchant = body && rule.route === "/v1/payment_links" ? { ...body, merchant_id: merchant } : body;
    const res = await fetch(url, {
      method: rule.method.toUpperCase(),
      headers: {
        authorization: `Bearer ${server.sandboxKey}`,
        ...(withMerchant ? { "content-type": "application/json" } : {}),
      },
      body: withMerchant ? JSON.stringify(withMerchant) : undefined,
    });
    return { status: res.status, body: (await res.json()) as Json };
  }

  /** Whether a document allows the rule's request. */
  function allows(schemas: ReturnType<typeof schemasOf>, rule: Rule, which: "broken" | "kept") {
    if (rule.query) return schemas.query(rule.method, rule.route, rule.query.name, rule.query[which]);
    const body = rule.body?.[which] ?? {};
    // The merchant is made at run time; any well-formed id stands for it in the document's check.
    const full = rule.route === "/v1/payment_links" ? { ...body, merchant_id: STAND_IN_MERCHANT } : body;
    return schemas.body(rule.method, rule.route, full);
  }

  for (const rule of RULES) {
    it(`${rule.name}: stated by the document, and the server's 400 says so`, async () => {
      // An operation added since the release (the sandbox clock) has no released schema to compare with.
      if (released.has(rule.method, rule.route)) {
        expect(allows(released, rule, "broken"), "the released document allowed the request").toBe(true);
      }
      expect(allows(current, rule, "broken"), "today's document refuses the request").toBe(false);
      expect(allows(current, rule, "kept"), "today's document allows the request that keeps the rule").toBe(true);

      const broken = await send(rule, "broken");
      expect(broken.status, JSON.stringify(broken.body)).toBe(400);
      expect(broken.body.param).toBe(rule.param);
      expect((broken.body.errors as Json[])[0]).toMatchObject({ param: rule.param, message: rule.message });

      const kept = await send(rule, "kept");
      expect(kept.status, JSON.stringify(kept.body)).toBeLessThan(300);
    });
  }
});
