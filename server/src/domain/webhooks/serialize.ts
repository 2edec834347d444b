import { type EventDoc, eventObject } from "../kernel/events.ts";
import type { Schemas } from "../kernel/operations.ts";
import { chaosOf } from "./chaos.ts";
import type { WebhookDeliveryDoc, WebhookEndpointDoc } from "./records.ts";
import { signatureScheme } from "./signing.ts";

// Stored events, endpoints and deliveries → the contract's Event, WebhookEndpoint and WebhookDelivery.
// An endpoint's secret leaves only in the answers that create or rotate it.

/** Events are flat: envelope first, then the type's own fields; webhook bodies are the same object. */
export const event = (e: EventDoc): Schemas["Event"] => eventObject(e);

export const webhookEndpoint = (e: WebhookEndpointDoc): Schemas["WebhookEndpoint"] => ({
  id: e.id,
  object: "webhook_endpoint",
  url: e.url,
  description: e.description,
  enabled_events: e.enabled_events,
  signature_scheme: signatureScheme(e),
  status: e.status,
  disabled_reason: e.disabled_reason,
  failing_since: e.failing_since,
  previous_secret_expires_at: e.previous_secret_expires_at,
  chaos: chaosOf(e),
  livemode: e.livemode,
  created_at: e.created_at,
  updated_at: e.updated_at,
});

/** Create and rotate_secret answer with the secret, once (WebhookEndpointWithSecret; never stored for replay). */
export const webhookEndpointWithSecret = ({ endpoint, secret }: { endpoint: WebhookEndpointDoc; secret: string }) => ({
  ...webhookEndpoint(endpoint),
  secret,
});

export const deletedWebhookEndpoint = (e: WebhookEndpointDoc): Schemas["DeletedWebhookEndpoint"] => ({
  id: e.id,
  object: "webhook_endpoint",
  deleted: true,
});

export const webhookDelivery = (d: WebhookDeliveryDoc): Schemas["WebhookDelivery"] => ({
  id: d.id,
  object: "webhook_delivery",
  endpoint_id: d.endpoint_id,
  event_id: d.event_id,
  event_type: d.event_type,
  status: d.status,
  attempt_count: d.attempts.length,
  next_attempt_at: d.next_attempt_at,
  attempts: d.attempts.map((a) => ({
    number: a.number,
    trigger: a.trigger,
    attempted_at: a.attempted_at,
    status_code: a.status_code,
    error: a.error,
    error_message: a.error_message,
    latency_ms: a.latency_ms,
    response_body: a.response_body,
    succeeded: a.succeeded,
    next_attempt_at: a.next_attempt_at,
  })),
  livemode: d.livemode,
  created_at: d.created_at,
  updated_at: d.updated_at,
});

/** recoverWebhookEndpoint's answer (WebhookRecovery). */
export const webhookRecovery = (r: {
  endpoint: WebhookEndpointDoc;
  since: string;
  scheduled: number;
  hasMore: boolean;
}): Schemas["WebhookRecovery"] => ({
  object: "webhook_recovery",
  endpoint_id: r.endpoint.id,
  since: r.since,
  scheduled: r.scheduled,
  has_more: r.hasMore,
});
