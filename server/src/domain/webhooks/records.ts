import type { components } from "@payments/contract/types";
import type { BaseDoc } from "../../store/port.ts";
import type { EventType } from "../kernel/events.ts";
import { collection } from "../kernel/records.ts";
import type { Status } from "../kernel/state-machine.ts";
import type { AreaDocs, AreaStore, AreaTx } from "../kernel/store.ts";
import type { SealedSecret } from "../vault/crypto.ts";

/** An event type an endpoint subscribes to, or `*` for all (the contract's EnabledEvent). */
export type EnabledEvent = components["schemas"]["EnabledEvent"];

/** How an endpoint's deliveries are signed (the contract's WebhookSignatureScheme). */
export type SignatureScheme = components["schemas"]["WebhookSignatureScheme"];

export type EndpointStatus = "enabled" | "disabled";

export type DeliveryStatus = "pending" | "succeeded" | "failed";

/** A URL that receives events (spec/resources/webhook-endpoints.tsp, WebhookEndpoint). */
export interface WebhookEndpointDoc extends BaseDoc {
  url: string;
  description: string | null;
  /** Event types, or "*" for all. */
  enabled_events: EnabledEvent[];
  /** Absent on endpoints made before the choice existed: they sign as `x_service_signature`. */
  signature_scheme?: SignatureScheme;
  /** Written only through ENDPOINT_MACHINE (state.ts). */
  status: Status<"webhook endpoint", EndpointStatus>;
  disabled_reason: "requested" | "gone" | "failing" | null;
  /** The first failed attempt since the last success, or null. */
  failing_since: string | null;
  /** The signing secret, encrypted under the vault's master key (never stored in clear). */
  secret: SealedSecret;
  /** The secret a rotation replaced, still signing until previous_secret_expires_at. */
  previous_secret: SealedSecret | null;
  previous_secret_expires_at: string | null;
  /** Sandbox only: how its deliveries misbehave on purpose (./chaos.ts). Absent on endpoints made before it existed: none. */
  chaos?: components["schemas"]["WebhookChaos"] | null;
  updated_at: string;
}

/** One attempt of a delivery (WebhookAttempt in the contract). */
export interface WebhookAttemptRecord {
  number: number;
  trigger: "automatic" | "manual";
  attempted_at: string;
  status_code: number | null;
  error: "timeout" | "dns_error" | "connection_error" | "tls_error" | "address_refused" | null;
  error_message: string | null;
  latency_ms: number;
  response_body: string | null;
  succeeded: boolean;
  next_attempt_at: string | null;
}

/**
 * One event's delivery to one endpoint. The dispatcher claims the next attempt with a lease: a
 * conditional update that sets `claim` to its own token and moves `next_attempt_at` to the lease's end,
 * so no other instance takes it until the lease runs out (the claimant crashed); the outcome is written
 * only while the claim is still the claimant's.
 */
export interface WebhookDeliveryDoc extends BaseDoc {
  endpoint_id: string;
  event_id: string;
  event_type: EventType;
  /** Written only through DELIVERY_MACHINE (state.ts). */
  status: Status<"webhook delivery", DeliveryStatus>;
  /** What the next attempt is: `automatic` ones follow the retry schedule, a `manual` one is not retried. */
  mode: "automatic" | "manual";
  /**
   * The next attempt was asked for by hand (POST /v1/events/{id}/redeliver) while the delivery was
   * still on its retry schedule: it is logged as `manual` and not counted as a retry, and if it fails
   * the schedule goes on from where it was. Absent on deliveries written before it existed: false.
   */
  manual_next?: boolean;
  /** When the next attempt is due; while claimed, when the claim's lease ends; null when none is scheduled. */
  next_attempt_at: string | null;
  /** The claim token of the instance sending the next attempt, or null. */
  claim: string | null;
  attempts: WebhookAttemptRecord[];
  updated_at: string;
}

/**
 * One slot of a key's open event streams (webhooks/stream-leases.ts): id `<key id>:<slot>`, held by one
 * open stream (`holder`, random) until `expires_at` unless renewed.
 */
export interface StreamLeaseDoc extends BaseDoc {
  key_id: string;
  holder: string;
  expires_at: string;
}

export const webhookCollections = {
  stream_leases: collection<StreamLeaseDoc>([{ fields: ["key_id", "expires_at"] }]),
  webhook_endpoints: collection<WebhookEndpointDoc>([{ fields: ["livemode", "status"] }]),
  webhook_deliveries: collection<WebhookDeliveryDoc>([
    // The dispatcher's queue: each environment's pending deliveries, soonest due first (each on its clock).
    { fields: ["livemode", "status", "next_attempt_at"] },
    // listWebhookEndpointDeliveries, with and without a status, and the failures since a time: in the
    // listing order straight from the index (issue 36).
    { fields: ["endpoint_id", "created_at", "id"] },
    { fields: ["endpoint_id", "status", "created_at", "id"] },
    // One delivery per event and endpoint: fan-out, redelivery and tests can never make two.
    { fields: ["event_id", "endpoint_id"], unique: true },
    // listEventDeliveries: an event's deliveries in the listing order (without it SQLite, which has no
    // statistics, walks the environment's listing index rather than sort the unique index's few).
    { fields: ["event_id", "created_at", "id"] },
  ]),
};

/** The store as the webhooks area sees it: its own collections and the kernel's (kernel/store.ts). */
export type WebhookStore = AreaStore<typeof webhookCollections>;
export type WebhookTx = AreaTx<typeof webhookCollections>;
export type WebhookDocs = AreaDocs<typeof webhookCollections>;
