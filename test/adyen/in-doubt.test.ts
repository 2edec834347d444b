import { createPaymentsClient, type PaymentsClient, unwrap } from "@payments/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMerchant, createToken, freshCardNumber } from "../e2e/fixtures.ts";
import {
  ADYEN_DOCUMENTS,
  ADYEN_TEST_CREDENTIALS,
  type AdyenStandIn,
  startAdyenStandIn,
  startPrismProxy,
} from "../support/adyen-stand-in/index.ts";
import type { RunningProxy } from "../support/adyen-stand-in/prism-proxy.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// A new charge whose authorization Adyen does not answer (issue 32; spec/common/acquirer.tsp
// AcquirerNotConfigured, `acquirer_in_doubt`): a real server with Adyen as its acquirer, through Prism's
// Checkout v71 proxy to the stand-in, whose /payments call fails once (a 500 after processing it, a time-out
// before its answer). The server answers 503 `acquirer_in_doubt` with Retry-After, never a 500; a retry with
// the same Idempotency-Key resumes the same charge without a second authorisation at Adyen.

let standIn: AdyenStandIn;
let prism: RunningProxy;
let server: TestServer;
let client: PaymentsClient;
/** One attempt per call: what a client that does not retry sees. */
let once: PaymentsClient;

beforeAll(async () => {
  standIn = await startAdyenStandIn(ADYEN_TEST_CREDENTIALS);
  prism = await startPrismProxy(ADYEN_DOCUMENTS.checkout, standIn.url);
  server = await startTestServer({
    SANDBOX_ACQUIRER: "adyen",
    PRODUCTION_ACQUIRER: "adyen",
    ADYEN_ENVIRONMENT: "test",
    ADYEN_API_KEY: ADYEN_TEST_CREDENTIALS.apiKey,
    ADYEN_MERCHANT_ACCOUNT: ADYEN_TEST_CREDENTIALS.merchantAccount,
    ADYEN_HMAC_KEYS: ADYEN_TEST_CREDENTIALS.hmacKey,
    ADYEN_CHECKOUT_URL: prism.url,
    ADYEN_PAYOUT_URL: prism.url,
    ADYEN_DISPUTES_URL: prism.url,
    ADYEN_TIMEOUT_MS: "1500",
  });
  // The typed client retries a 503 with the same key, honouring Retry-After: waited for here without time.
  client = createPaymentsClient({ baseUrl: server.url, apiKey: server.sandboxKey, sleep: async () => {} });
  once = createPaymentsClient({ baseUrl: server.url, apiKey: server.sandboxKey, maxRetries: 0 });
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
