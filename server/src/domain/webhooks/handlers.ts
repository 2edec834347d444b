import { defaulted, type HandlerKit, type Handlers, list, page } from "../kernel/operations.ts";
import type { Events } from "./events.ts";
import type { Webhooks } from "./index.ts";
import * as serialize from "./serialize.ts";

// Events, webhook endpoints and their attempt log (spec/resources/events.tsp and
// webhook-endpoints.tsp; scope `webhooks`).

export function webhookHandlers({ events, webhooks }: { events: Events; webhooks: Webhooks }, { answer }: HandlerKit) {
  const { endpoints, deliveries } = webhooks;
  return {
    listEvents: async ({ caller, query }) => ({
      status: 200,
      body: list(await events.list(caller, { type: query.type }, page(query)), serialize.event),
    }),
    getEvent: async ({ caller, path }) => ({ status: 200, body: serialize.event(await events.get(caller, path.id)) }),
    listEventDeliveries: async ({ caller, path, query }) => ({
      status: 200,
      body: list(
        await deliveries.listEventDeliveries(caller, path.id, { status: query.status }, page(query)),
        serialize.webhookDelivery,
      ),
    }),
    redeliverEvent: answer(202, serialize.webhookDelivery, ({ caller, path, body }) =>
      deliveries.redeliver(caller, path.id, body.endpoint_id),
    ),

    createWebhookEndpoint: answer(201, serialize.webhookEndpointWithSecret, ({ caller, body }) =>
      endpoints.create(caller, body),
    ),
    listWebhookEndpoints: async ({ caller, query }) => ({
      status: 200,
      body: list(await endpoints.list(caller, page(query)), serialize.webhookEndpoint),
    }),
    getWebhookEndpoint: async ({ caller, path }) => ({
      status: 200,
      body: serialize.webhookEndpoint(await endpoints.get(caller, path.id)),
    }),
    updateWebhookEndpoint: async ({ caller, path, body }) => ({
      status: 200,
      body: serialize.webhookEndpoint(await endpoints.update(caller, path.id, body)),
    }),
    deleteWebhookEndpoint: async ({ caller, path }) => ({
      status: 200,
      body: serialize.deletedWebhookEndpoint(await endpoints.delete(caller, path.id)),
    }),
    rotateWebhookEndpointSecret: answer(200, serialize.webhookEndpointWithSecret, ({ caller, path, body }) =>
      endpoints.rotateSecret(caller, path.id, defaulted(body.grace_period_seconds, "grace_period_seconds")),
    ),
    testWebhookEndpoint: answer(202, serialize.webhookDelivery, ({ caller, path }) => deliveries.test(caller, path.id)),
    recoverWebhookEndpoint: answer(202, serialize.webhookRecovery, ({ caller, path, body }) =>
      deliveries.recover(caller, path.id, body.since),
    ),
    listWebhookEndpointDeliveries: async ({ caller, path, query }) => ({
      status: 200,
      body: list(
        await deliveries.listDeliveries(caller, path.id, { status: query.status }, page(query)),
        serialize.webhookDelivery,
      ),
    }),
    getWebhookDelivery: async ({ caller, path }) => ({
      status: 200,
      body: serialize.webhookDelivery(await deliveries.getDelivery(caller, path.id)),
    }),
  } satisfies Partial<Handlers>;
}
