import type { Request, Response } from "express";
import type { Domain } from "../domain/index.ts";
import type { Caller } from "../domain/kernel/caller.ts";
import { DomainError } from "../domain/kernel/errors.ts";
import type { LinkPayment } from "../domain/payment-links/index.ts";
import type { Revealed } from "../domain/vault/tokens.ts";
import type { Page } from "../store/port.ts";
import type { OperationId, PathParams, QueryParams, Reply, RequestBody } from "./contract.ts";
import type { IdempotencyScope } from "./idempotency.ts";
import * as serialize from "./serialize.ts";

// One thin handler per operation id: validated input → domain use case → serialized output. The map's type
// lists every operation of the generated contract, so an operation without a handler fails `tsc`; app.ts
// checks the same at start-up against the document itself.

export interface OperationInput<K extends OperationId> {
  body: RequestBody<K>;
  path: PathParams<K>;
  query: QueryParams<K>;
  caller: Caller;
  /** The request's id (Request-Id), for operations that have no caller (public ones). */
  requestId: string;
  /** The client's address (Express's req.ip, TRUST_PROXY aware). */
  ip: string | undefined;
  /** Present when the request carries an Idempotency-Key (POST only). */
  idempotency?: IdempotencyScope | undefined;
}

export type OperationHandler<K extends OperationId> = (input: OperationInput<K>) => Promise<Reply<K>>;
export type Handlers = { [K in OperationId]: OperationHandler<K> };

/** Express glue: the validator has already checked body, path and query against the contract. */
export function toExpress<K extends OperationId>(handler: OperationHandler<K>) {
  return async (req: Request, res: Response) => {
    const reply = await handler({
      body: req.body as RequestBody<K>,
      path: req.params as PathParams<K>,
      query: req.query as QueryParams<K>,
      caller: res.locals.caller as Caller,
      requestId: String(res.locals.requestId),
      ip: req.ip,
      idempotency: res.locals.idempotency as IdempotencyScope | undefined,
    });
    res.status(reply.status as number).json(reply.body);
  };
}

/**
 * Makes handlers for POSTs whose use case commits a change. `present` turns the use case's result into the answer; when
 * the request carries an Idempotency-Key it also runs inside the use case's transaction (through the
 * caller's outcome recorder, domain/commit.ts), so the stored answer commits with the change.
 */
function answering(afterCommit: () => void) {
  return function answer<K extends OperationId, R>(
    status: Reply<K>["status"],
    present: (result: R) => Reply<K>["body"],
    run: (input: OperationInput<K>) => Promise<R>,
  ): OperationHandler<K> {
    return async (input) => {
      const toReply = (result: R) => ({ status, body: present(result) }) as Reply<K>;
      const caller = input.idempotency
        ? { ...input.caller, outcome: input.idempotency.recorder((result) => toReply(result as R)) }
        : input.caller;
      const result = await run({ ...input, caller });
      afterCommit();
      return toReply(result);
    };
  };
}

export interface HandlerOptions {
  /** Called after a POST's use case has committed its change, before the answer is built (crash tests). */
  afterCommit?: () => void;
}

function page(query: { limit?: number; starting_after?: string; ending_before?: string }): Page {
  if (query.starting_after !== undefined && query.ending_before !== undefined) {
    const message = "pass starting_after or ending_before, not both";
    throw new DomainError("invalid_request", `starting_after and ending_before: ${message}`, {
      param: "starting_after",
      errors: [
        { param: "starting_after", message },
        { param: "ending_before", message },
      ],
    });
  }
  return {
    limit: query.limit === undefined ? 10 : Number(query.limit),
    startingAfter: query.starting_after,
    endingBefore: query.ending_before,
  };
}

export function createHandlers(domain: Domain, options: HandlerOptions = {}): Handlers {
  const { merchants, tokens, serviceKeys, events, charges, fraud, cashouts, paymentLinks } = domain;
  const hooks = domain.webhooks.endpoints;
  const afterCommit = options.afterCommit ?? (() => {});
  const answer = answering(afterCommit);
  const link = (l: Parameters<typeof paymentLinks.url>[0]) => serialize.paymentLink(l, paymentLinks.url(l));
  return {
    // Merchants (scope `merchants`)
    createMerchant: answer(201, serialize.merchant, ({ caller, body }) => merchants.create(caller, body)),
    getMerchant: async ({ caller, path }) => ({
      status: 200,
      body: serialize.merchant(await merchants.get(caller, path.id)),
    }),
    listMerchants: async ({ caller, query }) => ({
      status: 200,
      body: serialize.list(await merchants.list(caller, { status: query.status }, page(query)), serialize.merchant),
    }),
    updateMerchant: async ({ caller, path, body }) => ({
      status: 200,
      body: serialize.merchant(await merchants.update(caller, path.id, body)),
    }),

    getMerchantBalance: async ({ caller, path }) => {
      const { merchant, rows } = await domain.balances.get(caller, path.id);
      return { status: 200, body: serialize.balance(merchant.id, merchant.livemode, rows) };
    },

    // Tokens (create: `tokenization`; the rest: `vault`)
    // createToken answers 200, not 201: a fixed fact of this API (spec/resources/tokens.tsp).
    createToken: answer(200, serialize.token, ({ caller, body }) => tokens.create(caller, body)),
    getToken: async ({ caller, path }) => ({ status: 200, body: serialize.token(await tokens.get(caller, path.id)) }),
    deleteToken: async ({ caller, path }) => {
      const deleted = await tokens.delete(caller, path.id);
      return { status: 200, body: { id: deleted.id, object: "token", deleted: true } };
    },
    revealToken: answer(
      200,
      ({ token, pan, revealedAt }: Revealed) => ({
        id: token.id,
        object: "token_reveal",
        card: { number: pan, exp_month: token.exp_month, exp_year: token.exp_year },
        holder: token.holder,
        livemode: token.livemode,
        revealed_at: revealedAt,
      }),
      ({ caller, path }) => tokens.reveal(caller, path.id),
    ),

    // Service keys (scope `*`)
    createServiceKey: answer(201, serialize.serviceKeyWithSecret, ({ caller, body }) =>
      serviceKeys.create(caller, body),
    ),
    listServiceKeys: async ({ caller, query }) => ({
      status: 200,
      body: serialize.list(await serviceKeys.list(caller, page(query)), serialize.serviceKey),
    }),
    getServiceKey: async ({ caller, path }) => ({
      status: 200,
      body: serialize.serviceKey(await serviceKeys.get(caller, path.id)),
    }),
    rotateServiceKey: answer(200, serialize.serviceKeyWithSecret, ({ caller, path, body }) =>
      serviceKeys.rotate(caller, path.id, body.grace_period_seconds ?? 86400),
    ),
    revokeServiceKey: answer(200, serialize.serviceKey, ({ caller, path }) => serviceKeys.revoke(caller, path.id)),

    // Charges and refunds (scope `charges`)
    createCharge: answer(201, serialize.charge, ({ caller, body }) => charges.create(caller, body)),
    getCharge: async ({ caller, path }) => ({
      status: 200,
      body: serialize.charge(await charges.get(caller, path.id)),
    }),
    listCharges: async ({ caller, query }) => ({
      status: 200,
      body: serialize.list(
        await charges.list(
          caller,
          { merchant_id: query.merchant_id, status: query.status, payment_link_id: query.payment_link_id },
          page(query),
        ),
        serialize.charge,
      ),
    }),
    captureCharge: answer(200, serialize.charge, ({ caller, path, body }) =>
      charges.capture(caller, path.id, body.amount),
    ),
    voidCharge: answer(200, serialize.charge, ({ caller, path }) => charges.void(caller, path.id)),
    createRefund: answer(201, serialize.refund, ({ caller, path, body }) => charges.refund(caller, path.id, body)),
    listRefunds: async ({ caller, path, query }) => ({
      status: 200,
      body: serialize.list(await charges.listRefunds(caller, path.id, page(query)), serialize.refund),
    }),
    approveChargeReview: answer(200, serialize.charge, ({ caller, path }) => charges.approveReview(caller, path.id)),
    rejectChargeReview: answer(200, serialize.charge, ({ caller, path }) => charges.rejectReview(caller, path.id)),
    sandboxCompleteCharge: answer(200, serialize.charge, ({ caller, path }) => charges.complete(caller, path.id)),
    sandboxExpireCharge: answer(200, serialize.charge, ({ caller, path }) => charges.expire(caller, path.id)),

    // Fraud evaluation (scope `fraud`)
    createFraudEvaluation: answer(201, serialize.fraudEvaluation, ({ caller, body }) =>
      fraud.evaluations.create(caller, body),
    ),
    getFraudEvaluation: async ({ caller, path }) => ({
      status: 200,
      body: serialize.fraudEvaluation(await fraud.evaluations.get(caller, path.id)),
    }),
    listFraudEvaluations: async ({ caller, query }) => ({
      status: 200,
      body: serialize.list(
        await fraud.evaluations.list(caller, { tx_id: query.tx_id, decision: query.decision }, page(query)),
        serialize.fraudEvaluation,
      ),
    }),
    createFraudList: answer(201, serialize.fraudList, ({ caller, body }) => fraud.lists.create(caller, body)),
    listFraudLists: async ({ caller, query }) => ({
      status: 200,
      body: serialize.list(await fraud.lists.list(caller, { kind: query.kind }, page(query)), serialize.fraudList),
    }),
    getFraudList: async ({ caller, path }) => ({
      status: 200,
      body: serialize.fraudList(await fraud.lists.get(caller, path.id)),
    }),
    deleteFraudList: async ({ caller, path }) => {
      const deleted = await fraud.lists.delete(caller, path.id);
      return { status: 200, body: { id: deleted.id, object: "fraud_list", deleted: true } };
    },
    createFraudListItem: answer(201, serialize.fraudListItem, ({ caller, path, body }) =>
      fraud.lists.addItem(caller, path.id, body.value),
    ),
    listFraudListItems: async ({ caller, path, query }) => ({
      status: 200,
      body: serialize.list(await fraud.lists.listItems(caller, path.id, page(query)), serialize.fraudListItem),
    }),
    deleteFraudListItem: async ({ caller, path }) => {
      const deleted = await fraud.lists.deleteItem(caller, path.id);
      return { status: 200, body: { id: deleted.id, object: "fraud_list_item", deleted: true } };
    },
    getFraudSettings: async ({ caller }) => ({
      status: 200,
      body: serialize.fraudSettings(await fraud.settings.get(caller)),
    }),
    updateFraudSettings: async ({ caller, body }) => ({
      status: 200,
      body: serialize.fraudSettings(await fraud.settings.update(caller, body)),
    }),

    // Cashouts (scope `cashouts`)
    createCashout: answer(201, serialize.cashout, ({ caller, body }) => cashouts.create(caller, body)),
    getCashout: async ({ caller, path }) => ({
      status: 200,
      body: serialize.cashout(await cashouts.get(caller, path.id)),
    }),
    listCashouts: async ({ caller, query }) => ({
      status: 200,
      body: serialize.list(
        await cashouts.list(caller, { merchant_id: query.merchant_id, status: query.status }, page(query)),
        serialize.cashout,
      ),
    }),
    cancelCashout: answer(200, serialize.cashout, ({ caller, path }) => cashouts.cancel(caller, path.id)),
    sandboxPayCashout: answer(200, serialize.cashout, ({ caller, path }) => cashouts.sandboxPay(caller, path.id)),
    sandboxFailCashout: answer(200, serialize.cashout, ({ caller, path, body }) =>
      cashouts.sandboxFail(caller, path.id, body.failure_code),
    ),

    // Payment links (scope `payment_links`)
    createPaymentLink: answer(201, link, ({ caller, body }) => paymentLinks.create(caller, body)),
    getPaymentLink: async ({ caller, path }) => ({ status: 200, body: link(await paymentLinks.get(caller, path.id)) }),
    listPaymentLinks: async ({ caller, query }) => ({
      status: 200,
      body: serialize.list(
        await paymentLinks.list(
          caller,
          {
            merchant_id: query.merchant_id,
            active: query.active === undefined ? undefined : String(query.active) === "true",
          },
          page(query),
        ),
        link,
      ),
    }),
    updatePaymentLink: async ({ caller, path, body }) => ({
      status: 200,
      body: link(await paymentLinks.update(caller, path.id, body)),
    }),
    // Public (no key): the hosted page's payment. The domain builds the link's own caller; the answer is
    // recorded with the charge through the Idempotency-Key's recorder, as answer() does for keyed POSTs.
    payPaymentLink: async ({ path, body, requestId, ip, idempotency }) => {
      const toReply = (result: LinkPayment) => ({ status: 201 as const, body: serialize.paymentLinkPayment(result) });
      const outcome = idempotency?.recorder((result) => toReply(result as LinkPayment));
      const result = await paymentLinks.pay(path.id, body, { requestId, ip, outcome });
      afterCommit();
      return toReply(result);
    },

    // Events (scope `webhooks`)
    listEvents: async ({ caller, query }) => ({
      status: 200,
      body: serialize.list(await events.list(caller, { type: query.type }, page(query)), serialize.event),
    }),
    getEvent: async ({ caller, path }) => ({ status: 200, body: serialize.event(await events.get(caller, path.id)) }),
    listEventDeliveries: async ({ caller, path, query }) => ({
      status: 200,
      body: serialize.list(
        await hooks.listEventDeliveries(caller, path.id, { status: query.status }, page(query)),
        serialize.webhookDelivery,
      ),
    }),
    redeliverEvent: answer(202, serialize.webhookDelivery, ({ caller, path, body }) =>
      hooks.redeliver(caller, path.id, body.endpoint_id),
    ),

    // Webhook endpoints and their attempt log (scope `webhooks`)
    createWebhookEndpoint: answer(201, serialize.webhookEndpointWithSecret, ({ caller, body }) =>
      hooks.create(caller, body),
    ),
    listWebhookEndpoints: async ({ caller, query }) => ({
      status: 200,
      body: serialize.list(await hooks.list(caller, page(query)), serialize.webhookEndpoint),
    }),
    getWebhookEndpoint: async ({ caller, path }) => ({
      status: 200,
      body: serialize.webhookEndpoint(await hooks.get(caller, path.id)),
    }),
    updateWebhookEndpoint: async ({ caller, path, body }) => ({
      status: 200,
      body: serialize.webhookEndpoint(await hooks.update(caller, path.id, body)),
    }),
    deleteWebhookEndpoint: async ({ caller, path }) => {
      const deleted = await hooks.delete(caller, path.id);
      return { status: 200, body: { id: deleted.id, object: "webhook_endpoint", deleted: true } };
    },
    rotateWebhookEndpointSecret: answer(200, serialize.webhookEndpointWithSecret, ({ caller, path, body }) =>
      hooks.rotateSecret(caller, path.id, body.grace_period_seconds ?? 86400),
    ),
    testWebhookEndpoint: answer(202, serialize.webhookDelivery, ({ caller, path }) => hooks.test(caller, path.id)),
    recoverWebhookEndpoint: answer(
      202,
      (r: Awaited<ReturnType<typeof hooks.recover>>) => ({
        object: "webhook_recovery",
        endpoint_id: r.endpoint.id,
        since: r.since,
        scheduled: r.scheduled,
        has_more: r.hasMore,
      }),
      ({ caller, path, body }) => hooks.recover(caller, path.id, body.since),
    ),
    listWebhookEndpointDeliveries: async ({ caller, path, query }) => ({
      status: 200,
      body: serialize.list(
        await hooks.listDeliveries(caller, path.id, { status: query.status }, page(query)),
        serialize.webhookDelivery,
      ),
    }),
    getWebhookDelivery: async ({ caller, path }) => ({
      status: 200,
      body: serialize.webhookDelivery(await hooks.getDelivery(caller, path.id)),
    }),

    // The request log (scope `*`)
    listRequestLog: async ({ caller, query }) => ({
      status: 200,
      body: serialize.list(
        await domain.requestLog.list(
          caller,
          { key_id: query.key_id, method: query.method, outcome: query.outcome },
          page(query),
        ),
        serialize.requestLogEntry,
      ),
    }),

    // Health (public: no key, no caller; never in the request log, see app.ts)
    getLiveness: async () => ({ status: 200, body: { status: "ok" } }),
    getReadiness: async () => {
      await domain.health.ready();
      return { status: 200, body: { status: "ready", checks: { store: "ok" } } };
    },
  };
}
