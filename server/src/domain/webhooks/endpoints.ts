import type { components } from "@payments/contract/types";
import type { Page, PageResult } from "../../store/port.ts";
import type { Caller } from "../kernel/caller.ts";
import type { Clock } from "../kernel/clock.ts";
import { commit } from "../kernel/commit.ts";
import { inEnvironment } from "../kernel/environment.ts";
import { DomainError, invalid, notFound } from "../kernel/errors.ts";
import { newId, randomBase62 } from "../kernel/ids.ts";
import { defaulted } from "../kernel/operations.ts";
import { iso } from "../kernel/time.ts";
import { openSecret, sealSecret, type VaultKeys } from "../vault/crypto.ts";
import { chaosSettings } from "./chaos.ts";
import type { EnabledEvent, WebhookEndpointDoc, WebhookStore, WebhookTx } from "./records.ts";
import { type AddressPolicy, checkEndpointUrl, type Resolver } from "./ssrf.ts";
import { ENDPOINT_MACHINE } from "./state.ts";

// Webhook endpoints and their signing secrets (spec/resources/webhook-endpoints.tsp). Their deliveries
// (the attempt log, redelivery, recovery, test events) are ./deliveries.ts; sending is the dispatcher's
// (./dispatcher.ts).

const SECRET_PREFIX = "whsec_";
const SECRET_RANDOM_LENGTH = 32;

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

/**
 * createWebhookEndpoint's body (the contract's WebhookEndpointCreate). Its signature_scheme has a default
 * (x_service_signature), which the request validator fills in.
 */
export type EndpointCreate = components["schemas"]["WebhookEndpointCreate"];

/** updateWebhookEndpoint's body (the contract's WebhookEndpointUpdate). */
export type EndpointUpdate = components["schemas"]["WebhookEndpointUpdate"];

export interface WebhookEndpointsDeps {
  store: WebhookStore;
  clock: Clock;
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

/** 409 unless the endpoint is enabled: a disabled one receives nothing, test events and redeliveries included. */
export function assertEnabled(endpoint: WebhookEndpointDoc, param: string): void {
  if (endpoint.status !== "enabled") {
    throw new DomainError(
      "invalid_state_transition",
      `The webhook endpoint ${endpoint.id} is disabled (${endpoint.disabled_reason}); enable it first with PATCH {"disabled": false}.`,
      { param },
    );
  }
}

const conflict = (what: string) =>
  new DomainError("conflict", `The ${what} changed while it was being updated; retry.`);

export function createWebhookEndpoints(deps: WebhookEndpointsDeps): WebhookEndpoints {
  const { store, clock, vaultKeys } = deps;
  // A secret rotation's grace period is about a real receiver switching secrets: the server's own clock.
  const now = clock.real;

  async function load(livemode: boolean, id: string, param = "id"): Promise<WebhookEndpointDoc> {
    const endpoint = inEnvironment(await store.get("webhook_endpoints", id), livemode, "webhook endpoint", id, param);
    return current(endpoint, now());
  }

  async function checkUrl(livemode: boolean, url: string): Promise<void> {
    const why = await checkEndpointUrl(url, deps.policyFor(livemode), deps.resolve);
    if (why !== null) throw invalid("url", why);
  }

  const distinct = (events: EnabledEvent[]) => [...new Set(events)];

  return {
    load,

    async create(caller: Caller, input: EndpointCreate): Promise<{ endpoint: WebhookEndpointDoc; secret: string }> {
      await checkUrl(caller.livemode, input.url);
      const chaos = chaosSettings(caller.livemode, input.chaos) ?? null;
      const at = clock.createdAt(caller.livemode);
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
        signature_scheme: defaulted(input.signature_scheme, "signature_scheme"),
        status: ENDPOINT_MACHINE.start("enabled"),
        disabled_reason: null,
        failing_since: null,
        secret: sealSecret(secret, secretContext(id), vaultKeys),
        previous_secret: null,
        previous_secret_expires_at: null,
        chaos,
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
      const chaos = chaosSettings(caller.livemode, changes.chaos);
      const set: Partial<WebhookEndpointDoc> = { updated_at: iso(clock.now(caller.livemode)) };
      if (changes.url !== undefined) set.url = changes.url;
      if (changes.enabled_events !== undefined) set.enabled_events = distinct(changes.enabled_events);
      if (changes.description !== undefined) set.description = changes.description;
      if (changes.signature_scheme !== undefined) set.signature_scheme = changes.signature_scheme;
      if (chaos !== undefined) set.chaos = chaos;
      if (changes.disabled === true && endpoint.status === "enabled") {
        set.status = ENDPOINT_MACHINE.step(endpoint.status, "disabled");
        set.disabled_reason = "requested";
      } else if (changes.disabled === false && endpoint.status === "disabled") {
        set.status = ENDPOINT_MACHINE.step(endpoint.status, "enabled");
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
              updated_at: iso(clock.now(caller.livemode)),
            },
          },
          // Two rotations at once: only one keeps "its" old secret.
          { updated_at: endpoint.updated_at },
        );
        if (!rotated) throw conflict("webhook endpoint");
        return { endpoint: rotated, secret };
      });
    },
  };
}

/** The webhook endpoints' service (spec: WebhookEndpoint). */
export interface WebhookEndpoints {
  load: (livemode: boolean, id: string, param?: string) => Promise<WebhookEndpointDoc>;
  create(
    caller: Caller,
    input: EndpointCreate,
  ): Promise<{
    endpoint: WebhookEndpointDoc;
    secret: string;
  }>;
  get: (caller: Caller, id: string) => Promise<WebhookEndpointDoc>;
  list(caller: Caller, page: Page): Promise<PageResult<WebhookEndpointDoc>>;
  update(caller: Caller, id: string, changes: EndpointUpdate): Promise<WebhookEndpointDoc>;
  delete(caller: Caller, id: string): Promise<WebhookEndpointDoc>;
  rotateSecret(
    caller: Caller,
    id: string,
    gracePeriodSeconds: number,
  ): Promise<{
    endpoint: WebhookEndpointDoc;
    secret: string;
  }>;
}

/**
 * Inside the transaction that resets the sandbox clock to `now` (domain/sandbox-clock): an endpoint
 * failing since a time after the new now has its failure window begin again now. Returns how many.
 */
export async function restartSandboxFailureWindows(tx: WebhookTx, now: Date): Promise<number> {
  const failing = await tx.findAll("webhook_endpoints", { livemode: false, failing_since: { $gt: iso(now) } });
  for (const e of failing) await tx.update("webhook_endpoints", e.id, { set: { failing_since: iso(now) } });
  return failing.length;
}
