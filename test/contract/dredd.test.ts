// Contract tests with dredd (DESIGN §15: "contract (dredd)"): dredd reads the 3.0 document, sends each
// operation's request to a real server (test/support/server.ts) and compares the answers with the
// document; the hooks in ./hooks.ts add what dredd 14 cannot do by itself (auth, fixtures, request
// examples, schema checks against the canonical 3.1 document). dredd skips nothing silently here: the
// run fails on any dredd failure or error, and on any operation without a passing 2xx transaction.

import { EventEmitter } from "node:events";
import { fileURLToPath } from "node:url";
import { OPERATIONS, type OperationId } from "@payments/contract/operations";
import Dredd, { type DreddHooks, type DreddStats, type DreddTest, type DreddTransaction } from "dredd";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadContract } from "../support/openapi.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import {
  type ContractHooksContext,
  HOOKS_GLOBAL,
  isRunnable,
  loadOpenApi30,
  OPENAPI_30_PATH,
  operationOf,
  registerContractHooks,
  unusedId,
} from "./hooks.ts";

const HOOK_FILE = fileURLToPath(new URL("./dredd-hooks.cjs", import.meta.url));

interface Outcome {
  operationId: OperationId | undefined;
  status: number;
  title: string;
  message: string;
}

interface Run {
  error: Error | null | undefined;
  stats: DreddStats;
  passed: Outcome[];
  failed: Outcome[];
  errored: Outcome[];
  skipped: Outcome[];
  ctx: ContractHooksContext;
}

function outcome(test: DreddTest, message = test.message): Outcome {
  const op = test.origin ? operationOf({ origin: test.origin }) : undefined;
  return {
    operationId: op?.operationId,
    status: Number(test.expected?.statusCode),
    title: test.title,
    message,
  };
}

async function api(server: TestServer, method: string, path: string, body?: unknown): Promise<{ id: string }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${server.sandboxKey}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`fixture ${method} ${path} → ${res.status}: ${text}`);
  return JSON.parse(text) as { id: string };
}

/** One object per path-parameter operation; destructive operations (delete, revoke) get their own. */
async function createFixtures(server: TestServer): Promise<Partial<Record<OperationId, string>>> {
  const card = { card: "4242424242424242", holder: "Dredd Contract", exp_month: 12, exp_year: 2030 };
  const merchant = await api(server, "POST", "/v1/merchants", { name: "dredd fixture" });
  const token = await api(server, "POST", "/v1/tokens", card);
  const tokenToDelete = await api(server, "POST", "/v1/tokens", card);
  const key = await api(server, "POST", "/v1/service_keys", { name: "dredd fixture", scopes: ["merchants"] });
  const keyToRevoke = await api(server, "POST", "/v1/service_keys", { name: "dredd revoke", scopes: ["vault"] });

  // No API creates events yet (they come from charges and fraud evaluations), so one goes straight
  // into the store, shaped like a `fraud.evaluated` event (seed §2) in the caller's environment.
  const eventId = unusedId("evt");
  await server.running.store.insert("events", {
    id: eventId,
    livemode: false,
    created_at: new Date().toISOString(),
    type: "fraud.evaluated",
    payload: { tx_id: unusedId("tx"), score: 96, decision: "block", signals: ["highrisk_bin", "vpn_detected"] },
  });

  return {
    getEvent: eventId,
    getMerchant: merchant.id,
    updateMerchant: merchant.id,
    getToken: token.id,
    revealToken: token.id,
    deleteToken: tokenToDelete.id,
    getServiceKey: key.id,
    rotateServiceKey: key.id,
    revokeServiceKey: keyToRevoke.id,
  };
}

function runDredd(server: TestServer, ctx: ContractHooksContext): Promise<Run> {
  const emitter = new EventEmitter();
  const run: Omit<Run, "error" | "stats"> = { passed: [], failed: [], errored: [], skipped: [], ctx };
  emitter.on("test pass", (test: DreddTest) => run.passed.push(outcome(test)));
  emitter.on("test fail", (test: DreddTest) => run.failed.push(outcome(test)));
  emitter.on("test skip", (test: DreddTest) => run.skipped.push(outcome(test)));
  emitter.on("test error", (error: Error, test: DreddTest) => run.errored.push(outcome(test, String(error))));

  const dredd = new Dredd({
    endpoint: server.url,
    path: [OPENAPI_30_PATH],
    hookfiles: [HOOK_FILE],
    language: "nodejs",
    emitter,
    // The dot reporter prints one character per transaction and the details of failures at the end.
    reporter: ["dot"],
    // dredd's OpenAPI 3 parser warns about every keyword it does not support (format, pattern,
    // minLength, additionalProperties, ...): limits of dredd, not faults of the document. Errors stay.
    loglevel: "error",
    color: false,
  });
  const globals = globalThis as Record<symbol, unknown>;
  globals[HOOKS_GLOBAL] = (hooks: DreddHooks) => registerContractHooks(hooks, ctx);
  return new Promise<Run>((resolve) => {
    dredd.run((error, stats) => {
      delete globals[HOOKS_GLOBAL];
      resolve({ ...run, error, stats });
    });
  });
}

function list(outcomes: Outcome[]): string {
  return outcomes.map((o) => `${o.title}: ${o.message}`).join("\n");
}

describe("dredd against the 3.0 document", () => {
  let server: TestServer;
  let run: Run;

  beforeAll(async () => {
    server = await startTestServer();
    const ctx: ContractHooksContext = {
      secret: server.sandboxKey,
      fixtures: await createFixtures(server),
      contract: loadContract(),
      document: loadOpenApi30(),
      skipped: [],
      registered: false,
    };
    run = await runDredd(server, ctx);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  it("loads the hooks and finishes without a dredd error", () => {
    expect(run.ctx.registered, "dredd did not load test/contract/dredd-hooks.cjs").toBe(true);
    expect(run.error ?? null).toBeNull();
    expect(list(run.errored)).toBe("");
    expect(run.stats.errors).toBe(0);
  });

  it("has no failing transaction", () => {
    expect(list(run.failed)).toBe("");
    expect(run.stats.failures).toBe(0);
  });

  it("passes at least one 2xx transaction for every operation in OPERATIONS", () => {
    const covered = new Set(
      run.passed.filter((o) => o.status >= 200 && o.status < 300).map((o) => o.operationId as string),
    );
    const uncovered = OPERATIONS.map((op) => op.operationId).filter((id) => !covered.has(id));
    expect(uncovered).toEqual([]);
  });

  it("passes every documented 404 of an operation that addresses an object by id", () => {
    const expected = OPERATIONS.filter((op) => op.path.includes("{"))
      .filter((op) => run.ctx.document.paths[op.path]?.[op.method]?.responses["404"])
      .map((op) => op.operationId)
      .sort();
    const passed = run.passed
      .filter((o) => o.status === 404)
      .map((o) => o.operationId)
      .sort();
    expect(expected.length).toBeGreaterThan(0);
    expect(passed).toEqual(expected);
  });

  it("skips only the statuses dredd cannot produce", () => {
    // A 2xx (or a 404 by id) that ends up skipped would silently leave part of the contract untested.
    const wronglySkipped = run.skipped.filter((o) => {
      const op = OPERATIONS.find((candidate) => candidate.operationId === o.operationId);
      return !op || isRunnable(op, o.status);
    });
    expect(list(wronglySkipped)).toBe("");
    expect(run.skipped.length).toBe(run.ctx.skipped.length);
  });
});

describe("the hooks' response check", () => {
  // The check that makes up for dredd#1281 must itself be able to fail: feed it answers that break
  // the document in ways dredd alone lets through.
  const ctx: ContractHooksContext = {
    secret: "key_test_unused",
    fixtures: {},
    contract: loadContract(),
    document: loadOpenApi30(),
    skipped: [],
    registered: false,
  };
  const validation: Array<(t: DreddTransaction) => void> = [];
  const recorder = {
    beforeEach: () => {},
    beforeEachValidation: (hook: (t: DreddTransaction) => void) => validation.push(hook),
  } as unknown as DreddHooks;
  registerContractHooks(recorder, ctx);

  function merchantTransaction(body: unknown, contentType = "application/json; charset=utf-8"): DreddTransaction {
    return {
      name: "/v1/merchants/{id} > GET > 200 > application/json",
      id: "GET (200) /v1/merchants/mch_x",
      host: "127.0.0.1",
      port: "1",
      protocol: "http:",
      fullPath: "/v1/merchants/mch_x",
      request: { method: "GET", uri: "/v1/merchants/mch_x", headers: {}, body: "" },
      expected: { statusCode: "200", headers: { "Content-Type": "application/json", "Request-Id": "" } },
      real: {
        statusCode: 200,
        headers: { "content-type": contentType, "request-id": "req_x" },
        body: JSON.stringify(body),
      },
      origin: {
        filename: OPENAPI_30_PATH,
        apiName: "Payments API",
        resourceGroupName: "",
        resourceName: "/v1/merchants/{id}",
        actionName: "GET",
        exampleName: "200 > application/json",
      },
      skip: false,
    };
  }

  const merchant = {
    id: unusedId("mch"),
    object: "merchant",
    name: "Acme",
    status: "active",
    metadata: {},
    livemode: false,
    created_at: "2026-11-21T10:15:30.000Z",
    updated_at: "2026-11-21T10:15:30.000Z",
  };

  function validate(t: DreddTransaction): DreddTransaction {
    expect(validation).toHaveLength(1);
    for (const hook of validation) hook(t);
    return t;
  }

  it("accepts a conforming body and strips only the utf-8 charset before dredd compares content types", () => {
    const t = validate(merchantTransaction(merchant));
    expect(t.fail).toBeUndefined();
    expect(t.real?.headers["content-type"]).toBe("application/json");
  });

  it("fails a body with a wrong enum value, an unknown field or a missing field", () => {
    expect(validate(merchantTransaction({ ...merchant, status: "sleeping" })).fail).toMatch(/contract check: .*status/);
    expect(validate(merchantTransaction({ ...merchant, pan: "4242424242424242" })).fail).toMatch(/contract check/);
    const { name: _name, ...nameless } = merchant;
    expect(validate(merchantTransaction(nameless)).fail).toMatch(/contract check: .*name/);
  });

  it("fails an undocumented content type", () => {
    expect(validate(merchantTransaction(merchant, "text/html; charset=utf-8")).fail).toMatch(/content type/);
  });
});
