import { type PaymentsClient, unwrap } from "@payments/client";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Received, Receiver } from "../support/receiver.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { clientFor, createCharge } from "./fixtures.ts";

// Standard Webhooks as an endpoint's signature scheme (WebhookSignatureScheme in
// spec/resources/webhook-endpoints.tsp): a receiver using the `standardwebhooks` npm package, given the
// endpoint's secret exactly as the API returned it, verifies every delivery without custom code, and a
// wrong secret or an altered body fails. Everything goes to a receiver on 127.0.0.1.

let server: TestServer;
let client: PaymentsClient;
const receiver = new Receiver();

beforeAll(async () => {
  await receiver.start();
  server = await startTestServer({ WEBHOOK_POLL_INTERVAL_MS: "100" });
  client = clientFor(server, server.sandboxKey);
});
afterAll(async () => {
  await server.close();
  await receiver.stop();
});

function verify(secret: string, delivery: Received): unknown {
  try {
    return new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
  } catch (err) {
    return err;
  }
}

/** Another secret of the same shape: verifying with it must fail. */
const WRONG_SECRET = "whsec_0000000000000000000000000000Wrng";

describe("an endpoint signing with Standard Webhooks", () => {
  it("sends webhook-id, webhook-timestamp and webhook-signature that standardwebhooks verifies; a wrong secret fails", async () => {
    const endpoint = unwrap(
      await client.POST("/v1/webhook_endpoints", {
        body: {
          url: `${receiver.url}/standard`,
          enabled_events: ["payment.captured"],
          signature_scheme: "standard_webhooks",
        },
      }),
    );
    expect(endpoint.signature_scheme).toBe("standard_webhooks");
    const charge = await createCharge(client);

    const [delivery] = await receiver.waitFor("/standard");
    if (!delivery) throw new Error("no delivery");
    expect(delivery.headers["x-service-signature"]).toBeUndefined();
    expect(delivery.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    const eventId = String(delivery.headers["x-service-event-id"]);
    expect(delivery.headers["webhook-id"]).toBe(eventId);
    expect(Math.abs(Number(delivery.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(300);

    const event = verify(endpoint.secret, delivery);
    expect(event).toMatchObject({ id: eventId, type: "payment.captured", tx_id: charge.id });

    expect(verify(WRONG_SECRET, delivery)).toBeInstanceOf(WebhookVerificationError);
    // The id's last character changed to another one (an id ending in X stayed the same once in 62 runs).
    const changed = `${charge.id.slice(0, -1)}${charge.id.endsWith("X") ? "Y" : "X"}`;
    const altered = { ...delivery, body: delivery.body.replace(charge.id, changed) };
    expect(altered.body).not.toBe(delivery.body);
    expect(verify(endpoint.secret, altered)).toBeInstanceOf(WebhookVerificationError);
    const otherId = { ...delivery, headers: { ...delivery.headers, "webhook-id": "evt_000000000000000000000000" } };
    expect(verify(endpoint.secret, otherId)).toBeInstanceOf(WebhookVerificationError);
  });

  it("can be chosen later with an update; during a rotation's grace period both secrets verify", async () => {
    const created = unwrap(
      await client.POST("/v1/webhook_endpoints", {
        body: { url: `${receiver.url}/switched`, enabled_events: ["webhook_endpoint.test"] },
      }),
    );
    expect(created.signature_scheme).toBe("x_service_signature");
    const updated = unwrap(
      await client.PATCH("/v1/webhook_endpoints/{id}", {
        params: { path: { id: created.id } },
        body: { signature_scheme: "standard_webhooks" },
      }),
    );
    expect(updated.signature_scheme).toBe("standard_webhooks");
    const rotated = unwrap(
      await client.POST("/v1/webhook_endpoints/{id}/rotate_secret", {
        params: { path: { id: created.id } },
        body: { grace_period_seconds: 3600 },
      }),
    );
    unwrap(await client.POST("/v1/webhook_endpoints/{id}/test", { params: { path: { id: created.id } } }));

    const [delivery] = await receiver.waitFor("/switched");
    if (!delivery) throw new Error("no delivery");
    expect(String(delivery.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect(verify(rotated.secret, delivery)).toMatchObject({ type: "webhook_endpoint.test" });
    expect(verify(created.secret, delivery)).toMatchObject({ type: "webhook_endpoint.test" });
    expect(verify(WRONG_SECRET, delivery)).toBeInstanceOf(WebhookVerificationError);
  });
});
