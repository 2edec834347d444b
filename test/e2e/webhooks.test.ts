import { unwrap } from "@payments/client";
import { verifyWebhook, WebhookVerificationError } from "@payments/client/webhooks";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestClock } from "../support/clock.ts";
import { eventually } from "../support/eventually.ts";
import { type Received, Receiver } from "../support/receiver.ts";
import { loopbackResolver } from "../support/server.ts";
import { clientFor, createCharge, json, useServer } from "./fixtures.ts";

// Webhook delivery end to end (spec/resources/webhook-endpoints.tsp, the `webhooks` section): a
// receiver on 127.0.0.1 registered in the sandbox gets the events it subscribed to, signed so that our
// verifier and Stripe's SDK (an independent implementation of the same scheme) both accept them, and a
// wrong secret fails both; the attempt log shows every attempt; production refuses private targets.
// Every request goes to loopback; names resolve through a resolver of this test, never a DNS server.

const stripe = new Stripe("sk_test_not_used_no_network");

/** Verifies with Stripe's SDK; returns the event or the SDK's error. */
function stripeVerify(body: string, header: string, secret: string): unknown {
  try {
    return stripe.webhooks.constructEvent(body, header, secret);
  } catch (err) {
    return err;
  }
}

function ourVerify(body: string, header: string, secret: string | string[]): unknown {
  try {
    return verifyWebhook({ payload: body, header, secret });
  } catch (err) {
    return err;
  }
}

const header = (r: Received) => String(r.headers["x-service-signature"]);

const receiver = new Receiver();
beforeAll(() => receiver.start());
afterAll(() => receiver.stop());

// The server's clock stands still, so a retry comes when the test moves the clock to it; the schedule
// itself is tested in server/src/domain/webhooks/dispatcher.test.ts.
const clock = new TestClock();
const { server, client } = useServer(
  { WEBHOOK_SANDBOX_RETRY_SCHEDULE: "60,60", WEBHOOK_POLL_INTERVAL_MS: "50" },
  {
    clock,
    webhooks: {
      resolve: async (hostname) =>
        hostname === "internal.acme.test" ? [{ address: "10.0.0.7", family: 4 }] : loopbackResolver(hostname),
    },
  },
);

async function register(path: string, enabled_events: string[]) {
  return unwrap(
    await client.POST("/v1/webhook_endpoints", {
      // biome-ignore lint/suspicious/noExplicitAny: event type names are checked by the server
      body: { url: `${receiver.url}${path}`, enabled_events: enabled_events as any },
    }),
  );
}

describe("signed delivery to a sandbox receiver on 127.0.0.1", () => {
  it("delivers payment.captured after a capture; our verifier and Stripe's SDK accept it, a wrong secret fails both", async () => {
    const endpoint = await register("/captured", ["payment.captured"]);
    expect(endpoint.secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
    const charge = await createCharge(client, { capture: false });
    unwrap(await client.POST("/v1/charges/{id}/capture", { params: { path: { id: charge.id } }, body: {} }));

    const [delivery] = await receiver.waitFor("/captured");
    if (!delivery) throw new Error("no delivery");
    expect(delivery.headers["content-type"]).toBe("application/json");
    expect(delivery.headers["user-agent"]).toMatch(/^PaymentsWebhooks\/1\.0$/);
    expect(header(delivery)).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);

    const event = ourVerify(delivery.body, header(delivery), endpoint.secret);
    expect(event).toMatchObject({ type: "payment.captured", tx_id: charge.id, amount_captured: charge.amount });
    expect(stripeVerify(delivery.body, header(delivery), endpoint.secret)).toEqual(event);

    // The body is the event exactly as GET /v1/events/{id} returns it, byte for byte.
    const eventId = String(delivery.headers["x-service-event-id"]);
    const got = await fetch(`${server.url}/v1/events/${eventId}`, {
      headers: { authorization: `Bearer ${server.sandboxKey}` },
    });
    expect(await got.text()).toBe(delivery.body);

    const wrong = "whsec_0000000000000000000000000000wrong".slice(0, 38);
    const ours = ourVerify(delivery.body, header(delivery), wrong);
    expect(ours).toBeInstanceOf(WebhookVerificationError);
    expect((ours as WebhookVerificationError).reason).toBe("signature_mismatch");
    expect(stripeVerify(delivery.body, header(delivery), wrong)).toBeInstanceOf(
      Stripe.errors.StripeSignatureVerificationError,
    );
    // A body altered after signing fails both too.
    const altered = delivery.body.replace(`"amount_captured":${charge.amount}`, '"amount_captured":1');
    expect(ourVerify(altered, header(delivery), endpoint.secret)).toBeInstanceOf(WebhookVerificationError);
    expect(stripeVerify(altered, header(delivery), endpoint.secret)).toBeInstanceOf(
      Stripe.errors.StripeSignatureVerificationError,
    );

    // The attempt log, from both sides.
    const log = await eventually(
      "the attempt to be recorded",
      async () =>
        unwrap(await client.GET("/v1/webhook_endpoints/{id}/deliveries", { params: { path: { id: endpoint.id } } })),
      (page) => page.data[0]?.status === "succeeded",
    );
    expect(log.data).toHaveLength(1);
    expect(log.data[0]).toMatchObject({
      id: delivery.headers["x-service-delivery-id"],
      event_id: eventId,
      event_type: "payment.captured",
      attempt_count: 1,
      next_attempt_at: null,
      attempts: [{ number: 1, trigger: "automatic", status_code: 200, response_body: "ok", succeeded: true }],
    });
    const byEvent = unwrap(await client.GET("/v1/events/{id}/deliveries", { params: { path: { id: eventId } } }));
    expect(byEvent.data.map((d) => d.endpoint_id)).toEqual([endpoint.id]);
  });

  it("signs with both secrets during a rotation's grace period, and only the new one after it", async () => {
    const endpoint = await register("/rotating", ["payment.refunded"]);
    const old = endpoint.secret;
    const rotated = unwrap(
      await client.POST("/v1/webhook_endpoints/{id}/rotate_secret", {
        params: { path: { id: endpoint.id } },
        body: { grace_period_seconds: 3600 },
      }),
    );
    expect(rotated.secret).not.toBe(old);
    expect(rotated.previous_secret_expires_at).not.toBeNull();
    unwrap(await client.POST("/v1/webhook_endpoints/{id}/test", { params: { path: { id: endpoint.id } } }));
    const [during] = await receiver.waitFor("/rotating");
    if (!during) throw new Error("no delivery");
    expect(header(during)).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    for (const secret of [old, rotated.secret]) {
      expect(ourVerify(during.body, header(during), secret)).toMatchObject({ type: "webhook_endpoint.test" });
      expect(stripeVerify(during.body, header(during), secret)).toMatchObject({ type: "webhook_endpoint.test" });
    }

    // Ending the grace period at once: only the newest secret signs.
    const again = unwrap(
      await client.POST("/v1/webhook_endpoints/{id}/rotate_secret", {
        params: { path: { id: endpoint.id } },
        body: { grace_period_seconds: 0 },
      }),
    );
    unwrap(await client.POST("/v1/webhook_endpoints/{id}/test", { params: { path: { id: endpoint.id } } }));
    const [, after] = await receiver.waitFor("/rotating", 2);
    if (!after) throw new Error("no second delivery");
    expect(header(after)).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(ourVerify(after.body, header(after), again.secret)).toMatchObject({ type: "webhook_endpoint.test" });
    expect(stripeVerify(after.body, header(after), again.secret)).toMatchObject({ type: "webhook_endpoint.test" });
    expect(ourVerify(after.body, header(after), rotated.secret)).toBeInstanceOf(WebhookVerificationError);
    expect(stripeVerify(after.body, header(after), rotated.secret)).toBeInstanceOf(
      Stripe.errors.StripeSignatureVerificationError,
    );
  });

  it("logs a failed attempt and retries it; the retry carries the same event id and a new attempt number", async () => {
    receiver.answers.set("/flaky", (n) => (n === 1 ? [500, "not yet"] : [200, "ok"]));
    const endpoint = await register("/flaky", ["payment.voided"]);
    const charge = await createCharge(client, { capture: false });
    unwrap(await client.POST("/v1/charges/{id}/void", { params: { path: { id: charge.id } } }));
    const deliveries = () =>
      client.GET("/v1/webhook_endpoints/{id}/deliveries", { params: { path: { id: endpoint.id } } }).then(unwrap);
    const failedOnce = await eventually(
      "the failed attempt to be recorded",
      deliveries,
      (page) => page.data[0]?.attempt_count === 1 && page.data[0]?.next_attempt_at !== null,
    );
    // The retry is due a minute later (give or take the jitter): not before, and then at once.
    const due = Date.parse(failedOnce.data[0]?.next_attempt_at ?? "");
    expect(due - clock.ms).toBeGreaterThanOrEqual(48_000);
    expect(due - clock.ms).toBeLessThanOrEqual(72_000);
    expect(receiver.at("/flaky")).toHaveLength(1);
    clock.advance(due - clock.ms);
    const [first, second] = await receiver.waitFor("/flaky", 2);
    expect(first?.headers["x-service-event-id"]).toBe(second?.headers["x-service-event-id"]);
    expect([first?.headers["x-service-delivery-attempt"], second?.headers["x-service-delivery-attempt"]]).toEqual([
      "1",
      "2",
    ]);
    const log = await eventually(
      "the retry to be recorded",
      deliveries,
      (page) => page.data[0]?.status === "succeeded",
    );
    const [failed, succeeded] = log.data[0]?.attempts ?? [];
    expect(failed).toMatchObject({ number: 1, status_code: 500, response_body: "not yet", succeeded: false });
    expect(failed?.next_attempt_at).not.toBeNull();
    expect(succeeded).toMatchObject({ number: 2, status_code: 200, succeeded: true, next_attempt_at: null });
  });

  it("a 410 disables the endpoint and tells the other endpoints with webhook_endpoint.disabled", async () => {
    receiver.answers.set("/gone", () => [410, "gone"]);
    const gone = await register("/gone", ["payment.captured"]);
    const watcher = await register("/watcher", ["webhook_endpoint.disabled"]);
    unwrap(await client.POST("/v1/webhook_endpoints/{id}/test", { params: { path: { id: gone.id } } }));
    const [notice] = await receiver.waitFor("/watcher");
    if (!notice) throw new Error("no notice");
    expect(ourVerify(notice.body, header(notice), watcher.secret)).toMatchObject({
      type: "webhook_endpoint.disabled",
      endpoint_id: gone.id,
      reason: "gone",
      url: `${receiver.url}/gone`,
    });
    expect(unwrap(await client.GET("/v1/webhook_endpoints/{id}", { params: { path: { id: gone.id } } }))).toMatchObject(
      { status: "disabled", disabled_reason: "gone" },
    );
    const refused = await client.POST("/v1/webhook_endpoints/{id}/test", { params: { path: { id: gone.id } } });
    expect(refused.response.status).toBe(409);
    expect(refused.error).toMatchObject({ code: "invalid_state_transition" });
  });

  it("redelivers an event to an endpoint on request, as one manual attempt", async () => {
    const endpoint = await register("/manual", ["webhook_endpoint.test"]);
    const other = await register("/other", ["webhook_endpoint.test"]);
    const delivery = unwrap(
      await client.POST("/v1/webhook_endpoints/{id}/test", { params: { path: { id: other.id } } }),
    );
    const redelivered = await client.POST("/v1/events/{id}/redeliver", {
      params: { path: { id: delivery.event_id } },
      body: { endpoint_id: endpoint.id },
    });
    expect(redelivered.response.status).toBe(202);
    const [got] = await receiver.waitFor("/manual");
    expect(got?.headers["x-service-event-id"]).toBe(delivery.event_id);
    expect(ourVerify(got?.body ?? "", header(got as Received), endpoint.secret)).toMatchObject({
      type: "webhook_endpoint.test",
      endpoint_id: other.id,
    });
    const recorded = await eventually(
      "the redelivery to be recorded",
      async () =>
        unwrap(
          await client.GET("/v1/webhook_deliveries/{id}", { params: { path: { id: redelivered.data?.id ?? "" } } }),
        ),
      (d) => d.status === "succeeded",
    );
    expect(recorded.attempts).toMatchObject([{ trigger: "manual", status_code: 200 }]);
  });
});

describe("where endpoints may point", () => {
  it("production refuses http, loopback, private and metadata addresses, and names resolving to them", async () => {
    const live = clientFor(server, await server.key(["webhooks"], { live: true }));
    for (const url of [
      "http://127.0.0.1/hooks",
      `${receiver.url.replace("http:", "https:")}/hooks`,
      "http://10.0.0.1/hooks",
      "https://10.0.0.1/hooks",
      "https://169.254.169.254/latest/meta-data",
      "https://internal.acme.test/hooks",
      "https://localhost/hooks",
    ]) {
      const { response, error } = await live.POST("/v1/webhook_endpoints", {
        body: { url, enabled_events: ["*"] },
      });
      expect(response.status, url).toBe(400);
      expect(error).toMatchObject({ code: "invalid_request", param: "url" });
    }
    // An endpoint that was acceptable cannot be moved to such an address either.
    const ok = unwrap(
      await live.POST("/v1/webhook_endpoints", { body: { url: "https://hooks.example.com/x", enabled_events: ["*"] } }),
    );
    const moved = await live.PATCH("/v1/webhook_endpoints/{id}", {
      params: { path: { id: ok.id } },
      body: { url: "https://169.254.169.254/" },
    });
    expect(moved.response.status).toBe(400);
    expect(moved.error).toMatchObject({ param: "url" });
  });

  it("the sandbox accepts http and loopback, and refuses private and metadata addresses by default", async () => {
    for (const [url, status] of [
      ["http://127.0.0.1:9/hooks", 201],
      ["http://localhost:9/hooks", 201],
      ["http://10.0.0.1/hooks", 400],
      ["http://169.254.169.254/", 400],
    ] as const) {
      const res = await fetch(`${server.url}/v1/webhook_endpoints`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.sandboxKey}`, "content-type": "application/json" },
        body: JSON.stringify({ url, enabled_events: ["webhook_endpoint.test"] }),
      });
      expect(res.status, url).toBe(status);
      if (status === 400) expect(await json(res)).toMatchObject({ param: "url" });
    }
  });
});
