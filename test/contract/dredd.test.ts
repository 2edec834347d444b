// Contract tests with dredd (docs/contributing.md 'Tests'): dredd reads the 3.0 document, sends each
// operation's request to a real server (test/support/server.ts) and compares the answers with the document;
// the hooks in ./hooks.ts add what dredd 14 cannot do by itself (auth, fixtures, request examples, schema
// checks against the canonical 3.1 document). dredd skips nothing silently here: the run fails on any dredd
// failure or error, and on any operation without a passing 2xx transaction.

import { EventEmitter } from "node:events";
import { fileURLToPath } from "node:url";
import { OPERATIONS, type OperationId } from "@payments/contract/operations";
import Dredd, { type DreddHooks, type DreddStats, type DreddTest, type DreddTransaction } from "dredd";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notificationRequest, signedItem } from "../support/adyen-notifications.ts";
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
  withFixtureIds,
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
  const op = test.origin ? operationOf({ origin: test.origin, request: test.request }) : undefined;
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

interface Fixtures {
  /** The id each path-parameter operation addresses in its 2xx transaction. */
  byOperation: Partial<Record<OperationId, string>>;
  /** The id that replaces an example id of this prefix in a request body (see hooks.ts). */
  byPrefix: Partial<Record<string, string>>;
  /** Body fields set per operation (see hooks.ts). */
  bodyFields: Partial<Record<OperationId, Record<string, unknown>>>;
}

/**
 * One object per path-parameter operation; destructive operations (delete, revoke) and every charge
 * transition (capture, void, complete, expire) get their own, in the state the transition starts from.
 */
async function createFixtures(server: TestServer): Promise<Fixtures> {
  const card = { card: "4242424242424242", holder: "Dredd Contract", exp_month: 12, exp_year: 2030 };
  const merchant = await api(server, "POST", "/v1/merchants", { name: "dredd fixture" });
  const token = await api(server, "POST", "/v1/tokens", card);
  const tokenToDelete = await api(server, "POST", "/v1/tokens", card);
  const key = await api(server, "POST", "/v1/service_keys", { name: "dredd fixture", scopes: ["merchants"] });
  const keyToRevoke = await api(server, "POST", "/v1/service_keys", { name: "dredd revoke", scopes: ["vault"] });

  // getEvent reads an event put straight into the store, shaped like a `fraud.evaluated` event
  // (FraudEvaluatedEvent) in the caller's environment, so that it depends on no other operation recording
  // events.
  const eventId = unusedId("evt");
  await server.running.store.insert("events", {
    id: eventId,
    livemode: false,
    created_at: new Date().toISOString(),
    type: "fraud.evaluated",
    payload: { tx_id: unusedId("tx"), score: 96, decision: "block", signals: ["highrisk_bin", "vpn_detected"] },
  });

  // Charges get a merchant of their own: updateMerchant's 2xx example suspends its merchant, and a
  // suspended merchant takes no payments. createCharge's request examples name this merchant and the
  // token above in place of the example ids (ContractHooksContext.bodyIds).
  const chargeMerchant = await api(server, "POST", "/v1/merchants", { name: "dredd charges" });
  const charge = async (status: string, body: Record<string, unknown>) => {
    const created = (await api(server, "POST", "/v1/charges", { merchant_id: chargeMerchant.id, ...body })) as {
      id: string;
      status?: string;
    };
    if (created.status !== status) throw new Error(`fixture charge ${created.id} is ${created.status}, not ${status}`);
    return created;
  };
  const cardCharge = (capture: boolean) => ({
    amount: 2500,
    currency: "USD",
    payment_method: { type: "card", token: token.id },
    capture,
  });
  const pixCharge = { amount: 15000, currency: "BRL", payment_method: { type: "pix" } };
  // Captured (test card 4242…, approved), credited at once to the sandbox merchant's available
  // balance, with one refund already: createRefund's 2xx example refunds 500 more of the 2000 left.
  const captured = await charge("captured", cardCharge(true));
  await api(server, "POST", `/v1/charges/${captured.id}/refunds`, { amount: 500, reason: "duplicate" });
  // capture: false leaves them authorized; captureCharge's 2xx example captures 2500, all of it.
  const toCapture = await charge("authorized", cardCharge(false));
  const toVoid = await charge("authorized", cardCharge(false));
  // Test card 4000000000009235 is held for fraud review (authorized, review open): what approve and
  // reject act on.
  const reviewToken = await api(server, "POST", "/v1/tokens", { ...card, card: "4000000000009235" });
  const heldCharge = () =>
    charge("authorized", { ...cardCharge(true), payment_method: { type: "card", token: reviewToken.id } });
  const toApprove = await heldCharge();
  const toReject = await heldCharge();
  // Fraud: an evaluation, lists (one to delete) and an item of each kind of use.
  const evaluation = await api(server, "POST", "/v1/fraud/evaluations", { amount: 2500, currency: "USD" });
  const list = await api(server, "POST", "/v1/fraud/lists", { name: "dredd", kind: "ip_address", action: "flag" });
  const listToDelete = await api(server, "POST", "/v1/fraud/lists", {
    name: "dredd delete",
    kind: "email",
    action: "block",
  });
  const itemToDelete = await api(server, "POST", `/v1/fraud/lists/${list.id}/items`, { value: "198.51.100.9" });

  // 3-D Secure: test card 4000000000003220 always asks for a challenge, leaving its charge requires_action,
  // the state sandboxAnswerThreeDSecure answers.
  const challengeToken = await api(server, "POST", "/v1/tokens", { ...card, card: "4000000000003220" });
  const toAuthenticate = await charge("requires_action", {
    ...cardCharge(true),
    payment_method: { type: "card", token: challengeToken.id },
  });
  // Disputes: captured charges of a merchant of their own (a chargeback takes from its balance, never from
  // what createRefund's example refunds), one dispute per operation that acts on one, opened by the
  // sandbox helper; sandboxOpenDispute gets a captured charge with none.
  const disputeMerchant = await api(server, "POST", "/v1/merchants", { name: "dredd disputes" });
  // Each on a card of its own: the fraud engine's velocity rules would block a sixth charge on one card.
  const disputable = async (number: string) => {
    const cardToken = await api(server, "POST", "/v1/tokens", { ...card, card: number });
    const made = (await api(server, "POST", "/v1/charges", {
      merchant_id: disputeMerchant.id,
      ...cardCharge(true),
      payment_method: { type: "card", token: cardToken.id },
    })) as { id: string; status?: string };
    if (made.status !== "captured") throw new Error(`fixture charge ${made.id} is ${made.status}, not captured`);
    return made;
  };
  const dispute = async (number: string) =>
    api(server, "POST", `/v1/sandbox/charges/${(await disputable(number)).id}/dispute`, {});
  const disputeToGet = await dispute("5555555555554444");
  const disputeToUpdate = await dispute("4000056655665556");
  const disputeToClose = await dispute("6011111111111117");
  const disputeToResolve = await dispute("5200828282828210");
  const toDispute = await disputable("3566002020360505");
  // Sandboxes on demand: one to read, one to delete (each a store of its own).
  const sandboxToGet = await api(server, "POST", "/v1/sandboxes", { name: "dredd fixture" });
  const sandboxToDelete = await api(server, "POST", "/v1/sandboxes", { name: "dredd fixture, deleted" });

  // Local payments start pending, the only state the sandbox helpers act on.
  const toComplete = await charge("pending", pixCharge);
  const toExpire = await charge("pending", pixCharge);

  // Webhook endpoints: one per operation that changes or removes one. Their URL names a host the test
  // server never resolves (nothing is sent anywhere), and they subscribe to test events only.
  const endpoint = (url = "https://hooks.example.com/dredd") =>
    api(server, "POST", "/v1/webhook_endpoints", { url, enabled_events: ["webhook_endpoint.test"] });
  const hookEndpoint = await endpoint();
  const hookToUpdate = await endpoint();
  const hookToDelete = await endpoint();
  const hookToRotate = await endpoint();
  const hookToTest = await endpoint();
  const hookToRecover = await endpoint();
  const redeliverTarget = await endpoint();
  const testDelivery = await api(server, "POST", `/v1/webhook_endpoints/${hookEndpoint.id}/test`);

  // Cashouts draw on the charge merchant's EUR (createCashout's 2xx example cashes out EUR 500.00), so
  // the USD that createRefund's example refunds stays untouched. Each transition gets a pending cashout.
  await charge("captured", { ...cardCharge(true), amount: 100_000, currency: "EUR" });
  const cashout = () =>
    api(server, "POST", "/v1/cashouts", {
      merchant_id: chargeMerchant.id,
      amount: 1000,
      currency: "EUR",
      destination: { type: "iban", iban: "DE89370400440532013000", account_holder: "dredd fixture" },
    });
  const [cashoutToGet, cashoutToCancel, cashoutToPay, cashoutToFail] = [
    await cashout(),
    await cashout(),
    await cashout(),
    await cashout(),
  ];

  // A balance transaction: the cashout's own (getBalanceTransaction's path id).
  const transaction = await server.running.store.findOne("balance_transactions", { source_id: cashoutToGet.id });
  if (!transaction) throw new Error("the fixture cashout has no balance transaction");

  // Payment links: updatePaymentLink's example turns its link off, so the pay operation gets its own,
  // and the page token its body needs comes from that link's hosted page, as a payer's browser gets it.
  const link = () =>
    api(server, "POST", "/v1/payment_links", {
      merchant_id: chargeMerchant.id,
      amount: 2500,
      currency: "USD",
      description: "dredd fixture",
    });
  const [linkToGet, linkToUpdate, linkToPay] = [await link(), await link(), await link()];
  const page = await (await fetch(`${server.url}/pay/${linkToPay.id}`)).text();
  const pageToken = /data-page-token="([^"]+)"/.exec(page)?.[1];
  if (!pageToken) throw new Error("the payment page of the fixture link carries no page token");

  // Adyen's notification: its example's signature is made with no real key, so the items are replaced by
  // one signed with the test server's HMAC key, for a pending pix charge of its own.
  const pixToNotify = (await api(server, "POST", "/v1/charges", {
    merchant_id: chargeMerchant.id,
    amount: 2500,
    currency: "BRL",
    payment_method: { type: "pix" },
  })) as { id: string };
  const adyenItems = notificationRequest([
    signedItem({ eventCode: "AUTHORISATION", merchantReference: pixToNotify.id }),
  ]).notificationItems;

  return {
    byOperation: {
      getEvent: eventId,
      getMerchant: merchant.id,
      updateMerchant: merchant.id,
      getMerchantBalance: chargeMerchant.id,
      getMerchantFeeSchedule: merchant.id,
      setMerchantFeeSchedule: merchant.id,
      getToken: token.id,
      revealToken: token.id,
      deleteToken: tokenToDelete.id,
      getServiceKey: key.id,
      rotateServiceKey: key.id,
      revokeServiceKey: keyToRevoke.id,
      getCharge: captured.id,
      createRefund: captured.id,
      listRefunds: captured.id,
      captureCharge: toCapture.id,
      voidCharge: toVoid.id,
      sandboxCompleteCharge: toComplete.id,
      sandboxExpireCharge: toExpire.id,
      approveChargeReview: toApprove.id,
      rejectChargeReview: toReject.id,
      sandboxAnswerThreeDSecure: toAuthenticate.id,
      getDispute: disputeToGet.id,
      updateDispute: disputeToUpdate.id,
      closeDispute: disputeToClose.id,
      sandboxResolveDispute: disputeToResolve.id,
      sandboxOpenDispute: toDispute.id,
      getSandbox: sandboxToGet.id,
      deleteSandbox: sandboxToDelete.id,
      getFraudEvaluation: evaluation.id,
      getFraudList: list.id,
      deleteFraudList: listToDelete.id,
      createFraudListItem: list.id,
      listFraudListItems: list.id,
      deleteFraudListItem: itemToDelete.id,
      getWebhookEndpoint: hookEndpoint.id,
      updateWebhookEndpoint: hookToUpdate.id,
      deleteWebhookEndpoint: hookToDelete.id,
      rotateWebhookEndpointSecret: hookToRotate.id,
      testWebhookEndpoint: hookToTest.id,
      recoverWebhookEndpoint: hookToRecover.id,
      listWebhookEndpointDeliveries: hookEndpoint.id,
      getWebhookDelivery: testDelivery.id,
      listEventDeliveries: eventId,
      redeliverEvent: eventId,
      getCashout: cashoutToGet.id,
      getBalanceTransaction: transaction.id,
      cancelCashout: cashoutToCancel.id,
      sandboxPayCashout: cashoutToPay.id,
      sandboxFailCashout: cashoutToFail.id,
      getPaymentLink: linkToGet.id,
      updatePaymentLink: linkToUpdate.id,
      payPaymentLink: linkToPay.id,
    },
    byPrefix: { mch: chargeMerchant.id, tok: token.id, tx: captured.id, we: redeliverTarget.id },
    bodyFields: {
      payPaymentLink: { page_token: pageToken },
      receiveAdyenNotifications: { notificationItems: adyenItems },
    },
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
    const fixtures = await createFixtures(server);
    const ctx: ContractHooksContext = {
      secret: server.sandboxKey,
      fixtures: fixtures.byOperation,
      bodyIds: fixtures.byPrefix,
      bodyFields: fixtures.bodyFields,
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
    bodyIds: {},
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

describe("the hooks' request bodies", () => {
  // createCharge's request examples name a merchant and a token that exist nowhere; the hooks must
  // send the fixtures' ids instead, or the 2xx transaction would draw a 404.
  const document = loadOpenApi30();
  const examples = document.paths["/v1/charges"]?.post?.requestBody?.content?.["application/json"]?.examples ?? {};
  const fixtureIds = { mch: unusedId("mch"), tok: unusedId("tok") };

  function prepare(bodyIds: Partial<Record<string, string>>): DreddTransaction {
    const ctx: ContractHooksContext = {
      secret: "key_test_unused",
      fixtures: {},
      bodyIds,
      contract: loadContract(),
      document,
      skipped: [],
      registered: false,
    };
    const before: Array<(t: DreddTransaction) => void> = [];
    const recorder = {
      beforeEach: (hook: (t: DreddTransaction) => void) => before.push(hook),
      beforeEachValidation: () => {},
    } as unknown as DreddHooks;
    registerContractHooks(recorder, ctx);
    const transaction: DreddTransaction = {
      name: "/v1/charges > POST > 201 > application/json",
      id: "POST (201) /v1/charges",
      host: "127.0.0.1",
      port: "1",
      protocol: "http:",
      fullPath: "/v1/charges",
      // What dredd sends by itself: the operation's first request example.
      request: {
        method: "POST",
        uri: "/v1/charges",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(Object.values(examples)[0]?.value),
      },
      expected: { statusCode: "201", headers: { "Content-Type": "application/json" } },
      origin: {
        filename: OPENAPI_30_PATH,
        apiName: "Payments API",
        resourceGroupName: "",
        resourceName: "/v1/charges",
        actionName: "POST",
        exampleName: "201 > application/json",
      },
      skip: false,
    };
    expect(before).toHaveLength(1);
    for (const hook of before) hook(transaction);
    return transaction;
  }

  it("sends the 201 example with the fixture merchant in place of the example one", () => {
    const t = prepare(fixtureIds);
    expect(t.fail).toBeUndefined();
    const body = JSON.parse(t.request.body) as { merchant_id: string; payment_method: { type: string } };
    expect(body.merchant_id).toBe(fixtureIds.mch);
    expect(body.payment_method.type).not.toBe("oxxo"); // not the 400 example dredd would send
  });

  it("replaces the ids nested in a body, such as a card charge's token", () => {
    const card = examples.card_captured?.value as { payment_method: object } | undefined;
    expect(card).toBeDefined();
    const missing: string[] = [];
    expect(withFixtureIds(card, fixtureIds, missing)).toEqual({
      ...card,
      merchant_id: fixtureIds.mch,
      payment_method: { ...card?.payment_method, token: fixtureIds.tok },
    });
    expect(missing).toEqual([]);
  });

  it("fails a transaction whose body names an id of a prefix without a fixture", () => {
    expect(prepare({ tok: fixtureIds.tok }).fail).toMatch(/no body fixture for mch_/);
  });
});
