// Type-level tests: `tsc --noEmit -p clients/typescript` fails when the client's typing breaks, either
// through an `expectTypeOf` mismatch or through a `@ts-expect-error` line that stops being an error.
import type { WEBHOOK_EVENT_TYPES } from "@payments/contract/operations";
import { describe, expectTypeOf, it } from "vitest";
import {
  createPaymentsClient,
  type Event,
  type Merchant,
  type PaymentsApiError,
  type Problem,
  type Token,
  unwrap,
  type WebhookEventType,
} from "./index.ts";
import { verifyWebhook, type WebhookEvent, type WebhookEventOf } from "./webhooks.ts";

const client = createPaymentsClient({ apiKey: "key_test_x" });
// A session page authenticates with headers instead; with neither, there is no way in.
createPaymentsClient({ headers: { "X-CSRF-Token": "t" } });
// @ts-expect-error a key or the headers that stand for one are required
createPaymentsClient({ baseUrl: "http://127.0.0.1:3000" });

describe("client typing", () => {
  it("types a POST's body and answer by the contract", async () => {
    const result = await client.POST("/v1/merchants", { body: { name: "Acme", status: "active" } });
    expectTypeOf(result.data).toEqualTypeOf<Merchant | undefined>();
    expectTypeOf(result.error).toEqualTypeOf<Problem | undefined>();
    expectTypeOf(unwrap(result)).toEqualTypeOf<Merchant>();

    // @ts-expect-error `name` is required by MerchantCreate
    await client.POST("/v1/merchants", { body: { status: "active" } });
    // @ts-expect-error `status` only takes the MerchantStatus values
    await client.POST("/v1/merchants", { body: { name: "Acme", status: "open" } });
    // @ts-expect-error the body is required
    await client.POST("/v1/merchants");
  });

  it("types paths, methods and parameters", async () => {
    const token = await client.GET("/v1/tokens/{id}", { params: { path: { id: "tok_x" } } });
    expectTypeOf(token.data).toEqualTypeOf<Token | undefined>();
    const event = await client.GET("/v1/events/{id}", { params: { path: { id: "evt_x" } } });
    expectTypeOf(event.data).toEqualTypeOf<Event | undefined>();

    // @ts-expect-error no such path
    await client.GET("/v1/payouts", {});
    // @ts-expect-error /v1/tokens has no GET
    await client.GET("/v1/tokens", {});
    // @ts-expect-error the path parameter is required
    await client.GET("/v1/tokens/{id}", {});
    // @ts-expect-error `limit` is a number
    await client.GET("/v1/merchants", { params: { query: { limit: "10" } } });
    // @ts-expect-error `type` only takes declared event types
    await client.GET("/v1/events", { params: { query: { type: "payment.nope" } } });
  });

  it("types the thrown error", () => {
    expectTypeOf<PaymentsApiError["problem"]>().toEqualTypeOf<Problem | undefined>();
    expectTypeOf<PaymentsApiError["status"]>().toEqualTypeOf<number>();
    expectTypeOf<PaymentsApiError["code"]>().toEqualTypeOf<Problem["code"] | undefined>();
  });
});

describe("webhook typing", () => {
  it("derives the event union from the contract's webhooks", () => {
    // Exactly the contract's webhooks section (generated), fraud.evaluated and payment.captured among them.
    expectTypeOf<WebhookEventType>().toEqualTypeOf<(typeof WEBHOOK_EVENT_TYPES)[number]>();
    expectTypeOf<"fraud.evaluated" | "payment.captured">().toMatchTypeOf<WebhookEventType>();
    // @ts-expect-error not an event type of the contract
    expectTypeOf<"payment.nope">().toMatchTypeOf<WebhookEventType>();
    expectTypeOf<
      | "cashout.created"
      | "cashout.paid"
      | "cashout.failed"
      | "cashout.canceled"
      | "cashout.reconciled"
      | "payment_link.completed"
    >().toMatchTypeOf<WebhookEventType>();
    expectTypeOf<WebhookEvent["type"]>().toEqualTypeOf<WebhookEventType>();
    // Every webhook's payload carries its own name as `type`.
    expectTypeOf<WebhookEventOf<"fraud.evaluated">["type"]>().toEqualTypeOf<"fraud.evaluated">();
    expectTypeOf<WebhookEventOf<"payment.captured">["type"]>().toEqualTypeOf<"payment.captured">();
    expectTypeOf<WebhookEventOf<"cashout.failed">["failure_code"]>().toEqualTypeOf<
      "account_closed" | "no_account" | "declined" | "could_not_process"
    >();
    expectTypeOf<WebhookEventOf<"payment_link.completed">["uses"]>().toEqualTypeOf<number>();
  });

  it("narrows the verified event on `type`", () => {
    const verified = verifyWebhook({ payload: "{}", header: "t=1,v1=00", secret: "whsec_x" });
    expectTypeOf(verified).toEqualTypeOf<WebhookEvent>();
    if (verified.type === "fraud.evaluated") {
      expectTypeOf(verified.score).toEqualTypeOf<number>();
      expectTypeOf(verified.signals).toEqualTypeOf<string[]>();
      // @ts-expect-error amount_captured belongs to payment.captured
      verified.amount_captured;
    } else if (verified.type === "payment.captured") {
      expectTypeOf(verified.amount_captured).toEqualTypeOf<number>();
    } else if (verified.type === "payment.refunded") {
      expectTypeOf(verified.refund_id).toEqualTypeOf<string>();
      // @ts-expect-error failure_code belongs to payment.failed
      verified.failure_code;
    }
  });
});
