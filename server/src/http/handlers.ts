import type { Request, Response } from "express";
import type { Caller } from "../domain/context.ts";
import type { Domain } from "../domain/index.ts";
import type { Page } from "../store/port.ts";
import type { OperationId, PathParams, QueryParams, Reply, RequestBody } from "./contract.ts";
import * as serialize from "./serialize.ts";

// One thin handler per operation id (DESIGN §15): validated input → domain use case → serialized
// output. The map's type lists every operation of the generated contract, so an operation without a
// handler fails `tsc`; app.ts checks the same at start-up against the document itself.

export interface OperationInput<K extends OperationId> {
  body: RequestBody<K>;
  path: PathParams<K>;
  query: QueryParams<K>;
  caller: Caller;
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
    });
    res.status(reply.status as number).json(reply.body);
  };
}

function page(query: { limit?: number; starting_after?: string; ending_before?: string }): Page {
  return {
    limit: query.limit === undefined ? 10 : Number(query.limit),
    startingAfter: query.starting_after,
    endingBefore: query.ending_before,
  };
}

export function createHandlers(domain: Domain): Handlers {
  const { merchants, tokens, serviceKeys, events, charges } = domain;
  return {
    // Merchants (scope `merchants`)
    createMerchant: async ({ caller, body }) => ({
      status: 201,
      body: serialize.merchant(await merchants.create(caller, body)),
    }),
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
    createToken: async ({ caller, body }) => ({
      status: 200, // seed §4: tokenization answers 200, not 201
      body: serialize.token(await tokens.create(caller, body)),
    }),
    getToken: async ({ caller, path }) => ({ status: 200, body: serialize.token(await tokens.get(caller, path.id)) }),
    deleteToken: async ({ caller, path }) => {
      const deleted = await tokens.delete(caller, path.id);
      return { status: 200, body: { id: deleted.id, object: "token", deleted: true } };
    },
    revealToken: async ({ caller, path }) => {
      const { token, pan, revealedAt } = await tokens.reveal(caller, path.id);
      return {
        status: 200,
        body: {
          id: token.id,
          object: "token_reveal",
          card: { number: pan, exp_month: token.exp_month, exp_year: token.exp_year },
          holder: token.holder,
          livemode: token.livemode,
          revealed_at: revealedAt,
        },
      };
    },

    // Service keys (scope `*`)
    createServiceKey: async ({ caller, body }) => {
      const { key, secret } = await serviceKeys.create(caller, body);
      return { status: 201, body: { ...serialize.serviceKey(key), secret } };
    },
    listServiceKeys: async ({ caller, query }) => ({
      status: 200,
      body: serialize.list(await serviceKeys.list(caller, page(query)), serialize.serviceKey),
    }),
    getServiceKey: async ({ caller, path }) => ({
      status: 200,
      body: serialize.serviceKey(await serviceKeys.get(caller, path.id)),
    }),
    rotateServiceKey: async ({ caller, path, body }) => {
      const { key, secret } = await serviceKeys.rotate(caller, path.id, body.grace_period_seconds ?? 86400);
      return { status: 200, body: { ...serialize.serviceKey(key), secret } };
    },
    revokeServiceKey: async ({ caller, path }) => ({
      status: 200,
      body: serialize.serviceKey(await serviceKeys.revoke(caller, path.id)),
    }),

    // Charges and refunds (scope `charges`)
    createCharge: async ({ caller, body }) => ({
      status: 201,
      body: serialize.charge(await charges.create(caller, body)),
    }),
    getCharge: async ({ caller, path }) => ({
      status: 200,
      body: serialize.charge(await charges.get(caller, path.id)),
    }),
    listCharges: async ({ caller, query }) => ({
      status: 200,
      body: serialize.list(
        await charges.list(caller, { merchant_id: query.merchant_id, status: query.status }, page(query)),
        serialize.charge,
      ),
    }),
    captureCharge: async ({ caller, path, body }) => ({
      status: 200,
      body: serialize.charge(await charges.capture(caller, path.id, body.amount)),
    }),
    voidCharge: async ({ caller, path }) => ({
      status: 200,
      body: serialize.charge(await charges.void(caller, path.id)),
    }),
    createRefund: async ({ caller, path, body }) => ({
      status: 201,
      body: serialize.refund(await charges.refund(caller, path.id, body)),
    }),
    listRefunds: async ({ caller, path, query }) => ({
      status: 200,
      body: serialize.list(await charges.listRefunds(caller, path.id, page(query)), serialize.refund),
    }),
    sandboxCompleteCharge: async ({ caller, path }) => ({
      status: 200,
      body: serialize.charge(await charges.complete(caller, path.id)),
    }),
    sandboxExpireCharge: async ({ caller, path }) => ({
      status: 200,
      body: serialize.charge(await charges.expire(caller, path.id)),
    }),

    // Events (scope `webhooks`)
    listEvents: async ({ caller, query }) => ({
      status: 200,
      body: serialize.list(await events.list(caller, { type: query.type }, page(query)), serialize.event),
    }),
    getEvent: async ({ caller, path }) => ({ status: 200, body: serialize.event(await events.get(caller, path.id)) }),

    // Health (public: no key, no caller; never in the request log, see app.ts)
    getLiveness: async () => ({ status: 200, body: { status: "ok" } }),
    getReadiness: async () => {
      await domain.health.ready();
      return { status: 200, body: { status: "ready", checks: { store: "ok" } } };
    },
  };
}
