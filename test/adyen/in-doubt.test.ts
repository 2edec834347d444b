import { createPaymentsClient, type PaymentsClient, unwrap } from "@payments/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMerchant, createToken, freshCardNumber } from "../e2e/fixtures.ts";
import {
  ADYEN_DOCUMENTS,
  ADYEN_TEST_CREDENTIALS,
  type AdyenStandIn,
  adyenAcquirerSettings,
  startAdyenStandIn,
  startPrismProxy,
} from "../support/adyen-stand-in/index.ts";
import type { RunningProxy } from "../support/adyen-stand-in/prism-proxy.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Calls Adyen does not answer (issue 32; spec/common/acquirer.tsp AcquirerNotConfigured, `acquirer_in_doubt`;
// docs/api.md "When the acquirer does not answer"): a real server with Adyen as its acquirer, through
// Prism's Checkout v71 proxy to the stand-in, whose calls fail once on demand (a 500 after processing it, a
// time-out before its answer). A new charge, a capture and a void answer 503 `acquirer_in_doubt` with
// Retry-After, never a 500; a retry with the same Idempotency-Key, or without one the recovery job, sends
// the same call under the same key, so Adyen performs it once (counted per reference at the stand-in). A
// refund is recorded before its call: answered 201, sent again by the recovery job, refunded once.

let standIn: AdyenStandIn;
let prism: RunningProxy;
let server: TestServer;
let client: PaymentsClient;
/** One attempt per call: what a client that does not retry sees. */
let once: PaymentsClient;
/** How long a call in doubt waits for its request before the recovery job takes it (IDEMPOTENCY_LOCK_SECONDS). */
const LOCK_SECONDS = 60;

beforeAll(async () => {
  standIn = await startAdyenStandIn(ADYEN_TEST_CREDENTIALS);
  prism = await startPrismProxy(ADYEN_DOCUMENTS.checkout, standIn.url);
  server = await startTestServer({
    // What a `no_answer` fault costs a test; not less: on a busy machine a call through Prism can take
    // over 1.5 s, and a call in doubt by accident fails the test that did not plan one.
    ...adyenAcquirerSettings(prism.url, { timeoutMs: 3000, sandbox: true }),
    IDEMPOTENCY_LOCK_SECONDS: String(LOCK_SECONDS),
  });
  // The typed client retries a 503 with the same key, honouring Retry-After: waited for here without time.
  client = createPaymentsClient({ baseUrl: server.url, apiKey: server.sandboxKey, sleep: async () => {} });
  once = createPaymentsClient({ baseUrl: server.url, apiKey: server.sandboxKey, maxRetries: 0 });
  // One charge before the tests: Prism's first requests (compiling Adyen's schemas) are slow, and would put
  // the first test's retry in doubt by time-out. Left in doubt itself, it is reversed by recover() below.
  await client.POST("/v1/charges", { body: await chargeBody() });
}, 120_000);

afterAll(async () => {
  await server?.close();
  await prism?.stop();
  await standIn?.stop();
});

async function chargeBody() {
  const merchant = await createMerchant(client);
  const token = await createToken(client, freshCardNumber());
  return {
    merchant_id: merchant.id,
    amount: 4200,
    currency: "USD",
    payment_method: { type: "card" as const, token: token.id },
  };
}

describe("a charge whose authorization Adyen leaves in doubt", () => {
  it("answers 503 acquirer_in_doubt with Retry-After; the same Idempotency-Key resumes the same charge, authorised once", async () => {
    const body = await chargeBody();
    const headers = { "Idempotency-Key": `in-doubt-${body.merchant_id}` };
    standIn.injectFault("/payments", "error_after");
    const first = await once.POST("/v1/charges", { body, params: { header: headers } });
    expect(first.response.status).toBe(503);
    expect(first.response.headers.get("retry-after")).toBe("2");
    expect(first.error).toMatchObject({ code: "acquirer_in_doubt", status: 503 });
    const chargeId = /tx_\w+/.exec(String(first.error?.detail))?.[0];
    expect(chargeId).toBeDefined();

    const retried = unwrap(await client.POST("/v1/charges", { body, params: { header: headers } }));
    expect(retried).toMatchObject({ id: chargeId, status: "captured", amount_captured: 4200 });
    expect(standIn.performed.authorisation.get(retried.id)).toBe(1);
    expect(prism.violations()).toEqual([]);
  });

  it("the typed client's own retry (same key, after Retry-After) gets the charge: one authorisation at Adyen", async () => {
    const body = await chargeBody();
    standIn.injectFault("/payments", "error_before");
    const charge = unwrap(await client.POST("/v1/charges", { body }));
    expect(charge).toMatchObject({ status: "captured", amount_captured: 4200 });
    expect(standIn.performed.authorisation.get(charge.id)).toBe(1);
  });

  it("without a key, a time-out answers 503 acquirer_in_doubt and stores no charge", async () => {
    const body = await chargeBody();
    standIn.injectFault("/payments", "no_answer");
    const answer = await fetch(`${server.url}/v1/charges`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.sandboxKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(answer.status).toBe(503);
    expect(answer.headers.get("retry-after")).toBe("2");
    expect(await answer.json()).toMatchObject({ code: "acquirer_in_doubt", status: 503 });
    const listed = unwrap(await client.GET("/v1/charges", { params: { query: { merchant_id: body.merchant_id } } }));
    expect(listed.data).toEqual([]);
    expect(prism.violations()).toEqual([]);
  });
});

/** A charge made through the stand-in, and Adyen's pspReference of its payment (the path of its modifications). */
async function paymentOf(capture: boolean) {
  const charge = unwrap(await client.POST("/v1/charges", { body: { ...(await chargeBody()), capture } }));
  const payment = [...standIn.payments.values()].find((p) => p.merchantReference === charge.id);
  if (!payment) throw new Error(`the stand-in has no payment for ${charge.id}`);
  return { charge, psp: payment.pspReference };
}

/** Runs the recovery job: the sandbox clock moved past the lock of every call in doubt (sandbox-clock.ts runDue). */
async function recover() {
  unwrap(await client.POST("/v1/sandbox/clock/advance", { body: { seconds: LOCK_SECONDS + 1 } }));
}

const getCharge = async (id: string) => unwrap(await client.GET("/v1/charges/{id}", { params: { path: { id } } }));

/** POSTs without the typed client, so without an Idempotency-Key (the typed client sends one with every POST). */
function unkeyed(path: string, body?: unknown) {
  const authorization = `Bearer ${server.sandboxKey}`;
  return fetch(`${server.url}${path}`, {
    method: "POST",
    ...(body === undefined
      ? { headers: { authorization } }
      : { headers: { authorization, "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
}

describe("a capture, void or refund whose call Adyen leaves in doubt", () => {
  it("a partial capture answered 500 after Adyen captured: 503, the charge still authorized; the same key captures it, once", async () => {
    const { charge, psp } = await paymentOf(false);
    const headers = { "Idempotency-Key": `capture-${charge.id}` };
    standIn.injectFault(`/payments/${psp}/captures`, "error_after");
    const capture = { params: { path: { id: charge.id }, header: headers }, body: { amount: 2500 } };
    const first = await once.POST("/v1/charges/{id}/capture", capture);
    expect(first.response.status).toBe(503);
    expect(first.response.headers.get("retry-after")).toBe("2");
    expect(first.error).toMatchObject({ code: "acquirer_in_doubt", status: 503 });
    expect(first.error?.detail).toContain(`capture of charge ${charge.id}`);
    // Nothing half-written: the charge is as it was until the capture is settled.
    expect(await getCharge(charge.id)).toMatchObject({ status: "authorized", amount_captured: 0 });

    const retried = unwrap(await client.POST("/v1/charges/{id}/capture", capture));
    expect(retried).toMatchObject({ id: charge.id, status: "captured", amount_captured: 2500 });
    // Sent twice under one key, performed once: Adyen replayed its first answer.
    expect(standIn.received.filter((r) => r.idempotencyKey === `${charge.id}:capture`)).toHaveLength(2);
    expect(standIn.performed.capture.get(`${charge.id}:capture`)).toBe(1);
    expect(standIn.payments.get(psp)?.captured).toBe(2500);
    expect(prism.violations()).toEqual([]);
  });

  it("a void that times out without a key: 503; the recovery job cancels it, once", async () => {
    const { charge, psp } = await paymentOf(false);
    standIn.injectFault(`/payments/${psp}/cancels`, "no_answer");
    const first = await unkeyed(`/v1/charges/${charge.id}/void`);
    expect(first.status).toBe(503);
    expect(first.headers.get("retry-after")).toBe("2");
    expect(await first.json()).toMatchObject({ code: "acquirer_in_doubt", status: 503 });
    expect(await getCharge(charge.id)).toMatchObject({ status: "authorized" });

    await recover();
    expect(await getCharge(charge.id)).toMatchObject({ status: "voided" });
    expect(standIn.received.filter((r) => r.idempotencyKey === `${charge.id}:void`)).toHaveLength(2);
    expect(standIn.performed.cancel.get(`${charge.id}:void`)).toBe(1);
    expect(standIn.payments.get(psp)?.status).toBe("cancelled");
    expect(prism.violations()).toEqual([]);
  });

  it("a refund answered 500 after Adyen refunded: 201 (recorded); the same key gets the same refund; recovery sends it again: one refund at Adyen", async () => {
    const { charge, psp } = await paymentOf(true);
    const headers = { "Idempotency-Key": `refund-${charge.id}` };
    standIn.injectFault(`/payments/${psp}/refunds`, "error_after");
    const request = { params: { path: { id: charge.id }, header: headers }, body: { amount: 1500 } };
    const first = await once.POST("/v1/charges/{id}/refunds", request);
    expect(first.response.status).toBe(201);
    const refund = unwrap(first);
    expect(refund).toMatchObject({ status: "succeeded", amount: 1500 });

    // A client that lost that answer sends the same request again: the same refund, replayed.
    const again = await once.POST("/v1/charges/{id}/refunds", request);
    expect(again.response.headers.get("idempotent-replayed")).toBe("true");
    expect(unwrap(again).id).toBe(refund.id);

    await recover();
    expect(standIn.received.filter((r) => r.idempotencyKey === `${refund.id}:refund`)).toHaveLength(2);
    expect(standIn.performed.refund.get(`${refund.id}:refund`)).toBe(1);
    expect(standIn.payments.get(psp)?.refunded).toBe(1500);
    expect(await getCharge(charge.id)).toMatchObject({ status: "partially_refunded", amount_refunded: 1500 });
    expect(prism.violations()).toEqual([]);
  });

  it("a full refund that times out without a key: 201; a second full refund finds the charge refunded (409); one refund at Adyen", async () => {
    const { charge, psp } = await paymentOf(true);
    standIn.injectFault(`/payments/${psp}/refunds`, "no_answer");
    const first = await unkeyed(`/v1/charges/${charge.id}/refunds`, {});
    expect(first.status).toBe(201);
    const refund = (await first.json()) as { id: string; amount: number };
    expect(refund.amount).toBe(4200);

    // The client never learnt of it and asks again: what is left to refund already counts the first.
    const second = await unkeyed(`/v1/charges/${charge.id}/refunds`, {});
    expect(second.status).toBe(409);
    expect(await second.json()).toMatchObject({ code: "invalid_state_transition" });

    await recover();
    const refundsAtAdyen = standIn.received.filter(
      (r) => r.path === `/payments/${psp}/refunds` && r.idempotencyKey !== undefined,
    );
    expect(new Set(refundsAtAdyen.map((r) => r.idempotencyKey))).toEqual(new Set([`${refund.id}:refund`]));
    expect(standIn.performed.refund.get(`${refund.id}:refund`)).toBe(1);
    expect(standIn.payments.get(psp)?.refunded).toBe(4200);
    expect(await getCharge(charge.id)).toMatchObject({ status: "refunded", amount_refunded: 4200 });
    expect(prism.violations()).toEqual([]);
  });
});

describe("a local payment's start Adyen leaves in doubt", () => {
  async function sepaBody() {
    const merchant = await createMerchant(client);
    return {
      merchant_id: merchant.id,
      amount: 3100,
      currency: "EUR",
      payment_method: {
        type: "sepa_debit" as const,
        iban: "DE89 3704 0044 0532 0130 00",
        account_holder: "Ada Lovelace",
      },
    };
  }
  const chargeIdIn = (detail: unknown) => /tx_\w+/.exec(String(detail))?.[0] as string;

  it("a SEPA debit answered 500 after Adyen started it, without a key: 503, nothing stored; the recovery job cancels the debit, started once", async () => {
    const body = await sepaBody();
    standIn.injectFault("/payments", "error_after");
    const first = await unkeyed("/v1/charges", body);
    expect(first.status).toBe(503);
    expect(first.headers.get("retry-after")).toBe("2");
    const problem = (await first.json()) as { code: string; detail: string };
    expect(problem).toMatchObject({ code: "acquirer_in_doubt" });
    const chargeId = chargeIdIn(problem.detail);
    const listed = unwrap(await client.GET("/v1/charges", { params: { query: { merchant_id: body.merchant_id } } }));
    expect(listed.data).toEqual([]);
    const payment = [...standIn.payments.values()].find((p) => p.merchantReference === chargeId);
    expect(payment?.status).toBe("pending"); // Adyen took the debit: it would be collected

    await recover();
    // Sent again under its key (Adyen replays its answer: one debit), then reversed under the charge's own key.
    expect(standIn.received.filter((r) => r.idempotencyKey === `${chargeId}:start_local`)).toHaveLength(2);
    expect(standIn.performed.authorisation.get(chargeId)).toBe(1);
    expect(standIn.performed.reversal.get(`${chargeId}:reverse`)).toBe(1);
    expect(payment?.status).toBe("cancelled");
    expect(prism.violations()).toEqual([]);
  });

  it("a SEPA debit that times out, with a key: 503; the same Idempotency-Key resumes the same charge, debited once", async () => {
    const body = await sepaBody();
    const headers = { "Idempotency-Key": `sepa-${body.merchant_id}` };
    standIn.injectFault("/payments", "no_answer");
    const first = await once.POST("/v1/charges", { body, params: { header: headers } });
    expect(first.response.status).toBe(503);
    expect(first.error).toMatchObject({ code: "acquirer_in_doubt" });
    const chargeId = chargeIdIn(first.error?.detail);

    const retried = unwrap(await client.POST("/v1/charges", { body, params: { header: headers } }));
    expect(retried).toMatchObject({
      id: chargeId,
      status: "pending",
      payment_method: { type: "sepa_debit", last4: "3000" },
      next_action: { type: "await_debit" },
    });
    expect(standIn.performed.authorisation.get(chargeId)).toBe(1);
    expect(standIn.performed.reversal.get(`${chargeId}:reverse`)).toBeUndefined();
    expect(prism.violations()).toEqual([]);
  });
});
