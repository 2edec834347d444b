import type { Page, PageResult } from "../../store/port.ts";
import { DuplicateKeyError } from "../../store/port.ts";
import type { AppStore } from "../collections.ts";
import type { Caller, Now } from "../kernel/caller.ts";
import { commit } from "../kernel/commit.ts";
import { inEnvironment } from "../kernel/environment.ts";
import { DomainError, invalid, notFound } from "../kernel/errors.ts";
import type { EventDoc } from "../kernel/events.ts";
import { recordEvent } from "../kernel/events.ts";
import { newId, randomBase62 } from "../kernel/ids.ts";
import { createdAt, iso } from "../kernel/time.ts";
import { openSecret, sealSecret, type VaultKeys } from "../vault/crypto.ts";
import type { EnabledEvent, WebhookDeliveryDoc, WebhookEndpointDoc } from "./records.ts";
import { type AddressPolicy, checkEndpointUrl, type Resolver } from "./ssrf.ts";

// The webhook endpoint use cases (spec/resources/webhook-endpoints.tsp): endpoints and their secrets,
// the attempt log, redelivery, recovery and test events. Sending is the dispatcher's job
// (./dispatcher.ts); these only create or reschedule deliveries, and the outbox signal wakes it.

const SECRET_PREFIX = "whsec_";
const SECRET_RANDOM_LENGTH = 32;
/** WebhookRecovery.has_more: at most this many failed deliveries are rescheduled per call. */
export const RECOVER_BATCH = 1000;

/** The context a secret is sealed under: its endpoint, so a sealed secret does not open on another. */
export const secretContext = (endpointId: string) => `webhook_endpoint:${endpointId}`;

export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBase62(SECRET_RANDOM_LENGTH)}`;
}

/**
 * The secrets that sign a delivery made at `at`: the current one, then the previous one while a
 * rotation's grace period runs (WebhookEndpoint.previous_secret_expires_at).
 */
export function signingSecrets(endpoint: WebhookEndpointDoc, at: Date, keys: VaultKeys): string[] {
  const context = secretContext(endpoint.id);
  const secrets = [openSecret(endpoint.secret, context, keys)];
  if (
    endpoint.previous_secret &&
    endpoint.previous_secret_expires_at &&
    Date.parse(endpoint.previous_secret_expires_at) > at.getTime()
  ) {
    secrets.push(openSecret(endpoint.previous_secret, context, keys));
  }
  return secrets;
}

export interface EndpointCreate {
  url: string;
  enabled_events: EnabledEvent[];
  description?: string | undefined;
}

export interface EndpointUpdate {
  url?: string | undefined;
  enabled_events?: EnabledEvent[] | undefined;
  description?: string | null | undefined;
  disabled?: boolean | undefined;
}

export interface WebhookEndpointsDeps {
  store: AppStore;
  now: Now;
  vaultKeys: VaultKeys;
  resolve: Resolver;
  policyFor: (livemode: boolean) => AddressPolicy;
}

/** The endpoint as the API shows it: a rotation whose grace period has ended no longer counts. */
function current(endpoint: WebhookEndpointDoc, at: Date): WebhookEndpointDoc {
  if (endpoint.previous_secret_expires_at && Date.parse(endpoint.previous_secret_expires_at) <= at.getTime()) {
    return { ...endpoint, previous_secret: null, previous_secret_expires_at: null };
  }
  return endpoint;
}

const conflict = (what: string) =>
  new DomainError("conflict", `The ${what} changed while it was being updated; retry.`);

export function createWebhookEndpoints(deps: WebhookEndpointsDeps) {
  const { store, now, vaultKeys } = deps;

  async function load(livemode: boolean, id: string, param = "id"): Promise<WebhookEndpointDoc> {
    const endpoint = inEnvironment(await store.get("webhook_endpoints", id), livemode, "webhook endpoint", id, param);
    return current(endpoint, now());
  }

  async function loadEvent(livemode: boolean, id: string): Promise<EventDoc> {
    return inEnvironment(await store.get("events", id), livemode, "event", id);
  }

  async function checkUrl(livemode: boolean, url: string): Promise<void> {
    const why = await checkEndpointUrl(url, deps.policyFor(livemode), deps.resolve);
    if (why !== null) throw invalid("url", why);
  }

  function assertEnabled(endpoint: WebhookEndpointDoc, param: string): void {
    if (endpoint.status !== "enabled") {
      throw new DomainError(
        "invalid_state_transition",
        `The webhook endpoint ${endpoint.id} is disabled (${endpoint.disabled_reason}); enable it first with PATCH {"disabled": false}.`,
        { param },
      );
    }
  }

  const distinct = (events: EnabledEvent[]) => [...new Set(events)];

  /** A delivery due now, for one manual attempt. */
  function manualDelivery(event: EventDoc, endpointId: string, at: Date): WebhookDeliveryDoc {
    const stamp = createdAt(at);
    return {
      id: newId("whd"),
      livemode: event.livemode,
      created_at: stamp,
      updated_at: stamp,
      endpoint_id: endpointId,
      event_id: event.id,
      event_type: event.type,
      status: "pending",
      mode: "manual",
      next_attempt_at: iso(at),
      claim: null,
      attempts: [],
    };
  }

  return {
    async create(caller: Caller, input: EndpointCreate): Promise<{ endpoint: WebhookEndpointDoc; secret: string }> {
      await checkUrl(caller.livemode, input.url);
      const at = createdAt(now());
      const id = newId("we");
      const secret = newWebhookSecret();
      const endpoint: WebhookEndpointDoc = {
        id,
        livemode: caller.livemode,
        created_at: at,
        updated_at: at,
        url: input.url,
        description: input.description ?? null,
        enabled_events: distinct(input.enabled_events),
        status: "enabled",
        disabled_reason: null,
        failing_since: null,
        secret: sealSecret(secret, secretContext(id), vaultKeys),
        previous_secret: null,
        previous_secret_expires_at: null,
      };
      return commit(store, caller, async (tx) => {
        await tx.insert("webhook_endpoints", endpoint);
        return { endpoint, secret };
      });
    },

    get: (caller: Caller, id: string) => load(caller.livemode, id),

    async list(caller: Caller, page: Page): Promise<PageResult<WebhookEndpointDoc>> {
      const result = await store.list("webhook_endpoints", { livemode: caller.livemode }, page);
      const at = now();
      return { ...result, data: result.data.map((e) => current(e, at)) };
    },

    async update(caller: Caller, id: string, changes: EndpointUpdate): Promise<WebhookEndpointDoc> {
      const endpoint = await load(caller.livemode, id);
      if (changes.url !== undefined) await checkUrl(caller.livemode, changes.url);
      const set: Partial<WebhookEndpointDoc> = { updated_at: iso(now()) };
      if (changes.url !== undefined) set.url = changes.url;
      if (changes.enabled_events !== undefined) set.enabled_events = distinct(changes.enabled_events);
      if (changes.description !== undefined) set.description = changes.description;
      if (changes.disabled === true && endpoint.status === "enabled") {
        set.status = "disabled";
        set.disabled_reason = "requested";
      } else if (changes.disabled === false && endpoint.status === "disabled") {
        set.status = "enabled";
        set.disabled_reason = null;
        set.failing_since = null;
      }
      // Conditional on the version read, so a concurrent change (the dispatcher disabling it) is a 409.
      const updated = await store.update("webhook_endpoints", id, { set }, { updated_at: endpoint.updated_at });
      if (!updated) throw conflict("webhook endpoint");
      return current(updated, now());
    },

    async delete(caller: Caller, id: string): Promise<WebhookEndpointDoc> {
      const endpoint = await load(caller.livemode, id);
      // Its pending deliveries end `failed` when the dispatcher next picks them up (it finds no endpoint).
      if (!(await store.delete("webhook_endpoints", id, { livemode: caller.livemode }))) {
        throw notFound("webhook endpoint", id);
      }
      return endpoint;
    },

    async rotateSecret(
      caller: Caller,
      id: string,
      gracePeriodSeconds: number,
    ): Promise<{ endpoint: WebhookEndpointDoc; secret: string }> {
      const endpoint = await load(caller.livemode, id);
      const at = now();
      const secret = newWebhookSecret();
      const grace = gracePeriodSeconds > 0;
      return commit(store, caller, async (tx) => {
        const rotated = await tx.update(
          "webhook_endpoints",
          id,
          {
            set: {
              secret: sealSecret(secret, secretContext(id), vaultKeys),
              previous_secret: grace ? endpoint.secret : null,
              previous_secret_expires_at: grace ? iso(new Date(at.getTime() + gracePeriodSeconds * 1000)) : null,
              updated_at: iso(at),
            },
          },
          // Two rotations at once: only one keeps "its" old secret.
          { updated_at: endpoint.updated_at },
        );
        if (!rotated) throw conflict("webhook endpoint");
        return { endpoint: rotated, secret };
      });
    },

    /** POST /v1/webhook_endpoints/{id}/test: a `webhook_endpoint.test` event for this endpoint alone. */
    async test(caller: Caller, id: string): Promise<WebhookDeliveryDoc> {
      const endpoint = await load(caller.livemode, id);
      assertEnabled(endpoint, "id");
      return commit(store, caller, async (tx) => {
        const at = now();
        const event = await recordEvent(
          tx,
          now,
          endpoint.livemode,
          "webhook_endpoint.test",
          { endpoint_id: endpoint.id },
          { deliver: false },
        );
        const delivery = manualDelivery(event, endpoint.id, at);
        await tx.insert("webhook_deliveries", delivery);
        return delivery;
      });
    },

    /** POST /v1/webhook_endpoints/{id}/recover: failed deliveries since a time get one more attempt. */
    async recover(
      caller: Caller,
      id: string,
      since: string,
    ): Promise<{ endpoint: WebhookEndpointDoc; since: string; scheduled: number; hasMore: boolean }> {
      const endpoint = await load(caller.livemode, id);
      assertEnabled(endpoint, "id");
      const at = now();
      const sinceDate = new Date(since);
      if (sinceDate.getTime() > at.getTime()) throw invalid("since", "must not be in the future");
      const sinceIso = iso(sinceDate);
      return commit(store, caller, async (tx) => {
        // Oldest first, so calling again (has_more) carries on where this call stopped.
        const failed = await tx.findAll(
          "webhook_deliveries",
          { endpoint_id: endpoint.id, status: "failed", created_at: { $gte: sinceIso } },
          RECOVER_BATCH + 1,
          { by: "created_at", direction: "asc" },
        );
        let scheduled = 0;
        for (const delivery of failed.slice(0, RECOVER_BATCH)) {
          const done = await tx.update(
            "webhook_deliveries",
            delivery.id,
            { set: { status: "pending", mode: "manual", next_attempt_at: iso(at), claim: null, updated_at: iso(at) } },
            { status: "failed" },
          );
          if (done) scheduled++;
        }
        return { endpoint, since: sinceIso, scheduled, hasMore: failed.length > RECOVER_BATCH };
      });
    },

    /**
     * POST /v1/events/{id}/redeliver: one manual attempt of the event to the endpoint, now. A delivery
     * waiting for an automatic retry is attempted now instead (its schedule goes on if it fails); one
     * whose attempt is running is a 409.
     */
    async redeliver(caller: Caller, eventId: string, endpointId: string): Promise<WebhookDeliveryDoc> {
      const event = await loadEvent(caller.livemode, eventId);
      const endpoint = await load(caller.livemode, endpointId, "endpoint_id");
      assertEnabled(endpoint, "endpoint_id");
      const running = () =>
        new DomainError("conflict", "An attempt of this delivery is running; retry when it has finished.", {
          param: "endpoint_id",
        });
      try {
        return await commit(store, caller, async (tx) => {
          const at = now();
          const existing = await tx.findOne("webhook_deliveries", { event_id: event.id, endpoint_id: endpoint.id });
          if (!existing) {
            const delivery = manualDelivery(event, endpoint.id, at);
            await tx.insert("webhook_deliveries", delivery);
            return delivery;
          }
          const leased =
            existing.claim !== null &&
            existing.next_attempt_at !== null &&
            Date.parse(existing.next_attempt_at) > at.getTime();
          if (existing.status === "pending" && leased) throw running();
          const set: Partial<WebhookDeliveryDoc> = {
            status: "pending",
            next_attempt_at: iso(at),
            claim: null,
            updated_at: iso(at),
          };
          // A finished delivery gets one manual attempt; a pending one keeps its mode (and schedule).
          if (existing.status !== "pending") set.mode = "manual";
          const updated = await tx.update(
            "webhook_deliveries",
            existing.id,
            { set },
            { status: existing.status, claim: existing.claim, updated_at: existing.updated_at },
          );
          if (!updated) throw running();
          return updated;
        });
      } catch (err) {
        // Another redelivery (or the dispatcher's fan-out) made the delivery at the same moment.
        if (err instanceof DuplicateKeyError) throw running();
        throw err;
      }
    },

    async getDelivery(caller: Caller, id: string): Promise<WebhookDeliveryDoc> {
      return inEnvironment(await store.get("webhook_deliveries", id), caller.livemode, "webhook delivery", id);
    },

    /** The attempt log of one endpoint, newest first. */
    async listDeliveries(
      caller: Caller,
      endpointId: string,
      filter: { status?: WebhookDeliveryDoc["status"] | undefined },
      page: Page,
    ): Promise<PageResult<WebhookDeliveryDoc>> {
      const endpoint = await load(caller.livemode, endpointId);
      return store.list(
        "webhook_deliveries",
        { livemode: caller.livemode, endpoint_id: endpoint.id, ...(filter.status ? { status: filter.status } : {}) },
        page,
      );
    },

    /** The attempt log of one event, newest first. */
    async listEventDeliveries(
      caller: Caller,
      eventId: string,
      filter: { status?: WebhookDeliveryDoc["status"] | undefined },
      page: Page,
    ): Promise<PageResult<WebhookDeliveryDoc>> {
      const event = await loadEvent(caller.livemode, eventId);
      return store.list(
        "webhook_deliveries",
        { livemode: caller.livemode, event_id: event.id, ...(filter.status ? { status: filter.status } : {}) },
        page,
      );
    },
  };
}

export type WebhookEndpoints = ReturnType<typeof createWebhookEndpoints>;
