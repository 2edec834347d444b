import { stateMachine } from "../kernel/state-machine.ts";
import type { DeliveryStatus, EndpointStatus } from "./records.ts";

// The webhooks area's state machines, each the whole truth of its status.

/**
 * A webhook endpoint (WebhookEndpoint in spec/resources/webhook-endpoints.tsp): created enabled; disabled
 * on request (updateWebhookEndpoint) or by the dispatcher (gone, failing), enabled again on request.
 */
export const ENDPOINT_MACHINE = stateMachine<"webhook endpoint", EndpointStatus>("webhook endpoint", {
  initial: ["enabled"],
  transitions: { enabled: ["disabled"], disabled: ["enabled"] },
});

/**
 * A webhook delivery (WebhookDelivery): created pending; an attempt leaves it pending (a retry is
 * scheduled), succeeded or failed (none is left, or its endpoint is gone or disabled); a finished one
 * is pending again when it is redelivered or recovered by hand.
 */
export const DELIVERY_MACHINE = stateMachine<"webhook delivery", DeliveryStatus>("webhook delivery", {
  initial: ["pending"],
  transitions: { pending: ["pending", "succeeded", "failed"], succeeded: ["pending"], failed: ["pending"] },
});
