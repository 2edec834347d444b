/**
 * `payments trigger <event type>`: makes an event happen in the sandbox by creating, through the public
 * API and with the caller's key, the objects that produce it (a merchant, a token and a captured charge for
 * `payment.captured`), like `stripe trigger`. Every event type the contract declares has a trigger:
 * `TRIGGERS` is a record over the contract's webhook types, so a new event type without one fails `tsc`
 * here (and trigger.test.ts compares it with the generated document).
 *
 * The caller overrides any field of any request body a trigger sends with `[object:]path=value`
 * (`amount=5000`, `charge:currency=EUR`, `merchant:metadata.team=qa`); without `object:` the override
 * goes to the trigger's main object, the one whose change produces the event.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createPaymentsClient, type PaymentsClient, unwrap } from "./index.ts";
import type { WebhookEventType } from "./webhooks.ts";

/** The objects a trigger may create or act on, each one request body the caller can override. */
export type TriggerObject =
  | "merchant"
  | "merchant_update"
  | "token"
  | "charge"
  | "refund"
  | "evaluation"
  | "payment_link"
  | "payment"
  | "cashout"
  | "cashout_failure"
  | "dispute"
  | "dispute_update"
  | "dispute_resolution"
  | "service_key"
  | "rotation"
  | "webhook_endpoint";

export interface Trigger {
  /** What the trigger does, in a sentence. */
  description: string;
  /** The request bodies it sends, the main one (the default target of an override) first. */
  objects: readonly [TriggerObject, ...TriggerObject[]];
  run(ctx: TriggerContext): Promise<void>;
}

export interface TriggerContext {
  payments: PaymentsClient;
  baseUrl: string;
  /** `defaults` with the caller's overrides for `object` applied. */
  body<T extends object>(object: TriggerObject, defaults: T): T;
  /** Reports an object made or changed; `related`: other ids its events carry (an evaluation's `tx_id`). */
  made(object: TriggerObject, id: string, summary: string, related?: readonly string[]): void;
  /** Waits for `check` to give a value, polling (for what happens after an answer: a delivery). */
  waitFor<T>(what: string, check: () => Promise<T | undefined>): Promise<T>;
}

/** One override: `path` (dotted) in the body of `object` set to `value`. */
export interface TriggerOverride {
  object?: TriggerObject | undefined;
  path: string[];
  value: unknown;
}

export interface CreatedObject {
  object: TriggerObject;
  id: string;
  summary: string;
}

export interface TriggeredEvent {
  id: string;
  type: string;
}

export interface TriggerResult {
  type: WebhookEventType;
  created: CreatedObject[];
  /** The events about the objects created, oldest first; null when the key may not list events. */
  events: TriggeredEvent[] | null;
}

export interface TriggerOptions {
  baseUrl: string;
  /** A sandbox key with the scopes the trigger's requests need (`*` covers every trigger). */
  apiKey: string;
  type: string;
  overrides?: readonly TriggerOverride[];
  /** How long to wait for an event that follows a delivery (webhook_endpoint.disabled); default 30 s. */
  waitMs?: number;
  /** Called with each object as it is made. */
  onCreated?: (created: CreatedObject) => void;
  fetch?: (request: Request) => Promise<Response>;
}

/** A trigger that cannot run: an unknown type, an override it has no object for, a production key. */
export class TriggerError extends Error {
  override readonly name = "TriggerError";
}

const TRIGGER_OBJECTS: readonly TriggerObject[] = [
  "merchant",
  "merchant_update",
  "token",
  "charge",
  "refund",
  "evaluation",
  "payment_link",
  "payment",
  "cashout",
  "cashout_failure",
  "dispute",
  "dispute_update",
  "dispute_resolution",
  "service_key",
  "rotation",
  "webhook_endpoint",
];

/**
 * Parses `--set` arguments: `[object:]path=value`, the value read as JSON when it is JSON (`5000`,
 * `true`, `"0042"`, `["card","pix"]`) and as a string otherwise (`EUR`, `Summer sale`).
 */
export function parseOverride(text: string): TriggerOverride {
  const eq = text.indexOf("=");
  if (eq <= 0) throw new TriggerError(`--set takes [object:]field=value, not "${text}".`);
  let target = text.slice(0, eq);
  const raw = text.slice(eq + 1);
  let object: TriggerObject | undefined;
  const colon = target.indexOf(":");
  if (colon >= 0) {
    const name = target.slice(0, colon);
    if (!TRIGGER_OBJECTS.includes(name as TriggerObject)) {
      throw new TriggerError(
        `"${name}" in --set ${text} is not an object a trigger makes (${TRIGGER_OBJECTS.join(", ")}).`,
      );
    }
    object = name as TriggerObject;
    target = target.slice(colon + 1);
  }
  const path = target.split(".");
  if (path.some((p) => p === "")) throw new TriggerError(`"${target}" in --set ${text} is not a field path.`);
  let value: unknown = raw;
  try {
    value = JSON.parse(raw);
  } catch {
    // Not JSON: the text itself.
  }
  return { object, path, value };
}

function applyOverride(body: object, path: string[], value: unknown): void {
  let node = body as Record<string, unknown>;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== "object" || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1] as string] = value;
}

const CARD = { holder: "Ada Lovelace", exp_month: 12, exp_year: new Date().getUTCFullYear() + 3, cvc: "123" };
/** Sandbox test cards (docs/charges.md "Test cards"). */
const SUCCEEDS = "4242424242424242";
const DECLINED = "4000000000000002";
/** The sandbox card whose issuer always asks for a 3-D Secure challenge (docs/three-d-secure.md). */
const CHALLENGED = "4000000000003220";

const US_BANK_ACCOUNT = {
  type: "us_bank_account" as const,
  routing_number: "110000000",
  account_number: "000123456789",
  account_holder: "Trigger Test Inc.",
};

async function merchant(ctx: TriggerContext): Promise<string> {
  const made = unwrap(
    await ctx.payments.POST("/v1/merchants", { body: ctx.body("merchant", { name: "Trigger test merchant" }) }),
  );
  ctx.made("merchant", made.id, made.name);
  return made.id;
}

async function token(ctx: TriggerContext, card: string): Promise<string> {
  const made = unwrap(await ctx.payments.POST("/v1/tokens", { body: ctx.body("token", { card, ...CARD }) }));
  ctx.made("token", made.id, `${made.card.brand} ending ${made.card.last4}`);
  return made.id;
}

/**
 * A card charge. The merchant and token are made unless the caller names them
 * (`--set charge:merchant_id=mch_…`, `--set charge:payment_method.token=tok_…`).
 */
async function cardCharge(
  ctx: TriggerContext,
  options: { capture: boolean; card?: string; amount?: number; currency?: string },
) {
  const body = ctx.body("charge", {
    merchant_id: "",
    amount: options.amount ?? 2500,
    currency: options.currency ?? "USD",
    capture: options.capture,
    description: "payments trigger",
    payment_method: { type: "card" as const, token: "" },
  });
  if (body.merchant_id === "") body.merchant_id = await merchant(ctx);
  if (body.payment_method.type === "card" && body.payment_method.token === "") {
    body.payment_method.token = await token(ctx, options.card ?? SUCCEEDS);
  }
  const charge = unwrap(await ctx.payments.POST("/v1/charges", { body }));
  ctx.made("charge", charge.id, `${charge.status}, ${charge.amount} ${charge.currency}`);
  return charge;
}

/**
 * A captured card charge and a dispute the sandbox's bank opens on it. Its reason is product_not_received:
 * a `fraudulent` dispute marks the card (the `disputed_card` rule, docs/fraud.md), and every later trigger's charge
 * on the same test card would then be held or blocked by the fraud engine.
 */
async function dispute(ctx: TriggerContext) {
  const charge = await cardCharge(ctx, { capture: true });
  const opened = unwrap(
    await ctx.payments.POST("/v1/sandbox/charges/{id}/dispute", {
      params: { path: { id: charge.id } },
      body: ctx.body("dispute", { reason: "product_not_received" as const }),
    }),
  );
  ctx.made("dispute", opened.id, `${opened.status}, ${opened.amount} ${opened.currency} of ${charge.id}`);
  return opened;
}

async function pixCharge(ctx: TriggerContext) {
  const body = ctx.body("charge", {
    merchant_id: "",
    amount: 5000,
    currency: "BRL",
    description: "payments trigger",
    payment_method: { type: "pix" as const },
  });
  if (body.merchant_id === "") body.merchant_id = await merchant(ctx);
  const charge = unwrap(await ctx.payments.POST("/v1/charges", { body }));
  ctx.made(
    "charge",
    charge.id,
    `${charge.status}, ${charge.amount} ${charge.currency} by ${charge.payment_method.type}`,
  );
  return charge;
}

/** A pending cashout of a merchant funded by one captured charge of the cashout's amount (the sandbox settles at once). */
async function cashout(ctx: TriggerContext) {
  const body = ctx.body("cashout", {
    merchant_id: "",
    amount: 2500,
    currency: "USD",
    description: "payments trigger",
    destination: US_BANK_ACCOUNT,
  });
  if (body.merchant_id === "") {
    const charge = await cardCharge(ctx, { capture: true, amount: body.amount, currency: body.currency });
    body.merchant_id = charge.merchant_id;
  }
  const made = unwrap(await ctx.payments.POST("/v1/cashouts", { body }));
  ctx.made("cashout", made.id, `${made.status}, ${made.amount} ${made.currency}`);
  return made;
}

async function serviceKey(ctx: TriggerContext) {
  const made = unwrap(
    await ctx.payments.POST("/v1/service_keys", {
      body: ctx.body("service_key", { name: "payments trigger", scopes: ["merchants" as const] }),
    }),
  );
  // The secret is never printed: the key exists to make the event, and is revoked before the trigger ends.
  ctx.made("service_key", made.id, `${made.name} (${made.scopes.join(",")}), created`);
  return made;
}

async function revokeKey(ctx: TriggerContext, id: string) {
  unwrap(await ctx.payments.POST("/v1/service_keys/{id}/revoke", { params: { path: { id } } }));
  ctx.made("service_key", id, "revoked");
}

async function deleteEndpoint(ctx: TriggerContext, id: string) {
  unwrap(await ctx.payments.DELETE("/v1/webhook_endpoints/{id}", { params: { path: { id } } }));
  ctx.made("webhook_endpoint", id, "deleted");
}

/** The page token of a link's hosted page, as a payer's browser gets it (GET /pay/{id}). */
async function pageToken(ctx: TriggerContext, linkId: string): Promise<string> {
  const res = await fetch(new URL(`/pay/${encodeURIComponent(linkId)}`, ctx.baseUrl));
  const token = /data-page-token="([^"]+)"/.exec(await res.text())?.[1];
  if (!token) throw new TriggerError(`The hosted page of ${linkId} carried no page token (status ${res.status}).`);
  return token;
}

/**
 * One trigger per event type the contract declares. The mapped type makes this exhaustive: a type added
 * to the contract's `webhooks` without a trigger here fails `tsc`.
 */
export const TRIGGERS: { [K in WebhookEventType]: Trigger } = {
  "merchant.created": {
    description: "creates a merchant",
    objects: ["merchant"],
    run: async (ctx) => void (await merchant(ctx)),
  },
  "merchant.updated": {
    description: "creates a merchant, then renames it",
    objects: ["merchant_update", "merchant"],
    async run(ctx) {
      const id = await merchant(ctx);
      const updated = unwrap(
        await ctx.payments.PATCH("/v1/merchants/{id}", {
          params: { path: { id } },
          body: ctx.body("merchant_update", { name: "Trigger test merchant (renamed)" }),
        }),
      );
      ctx.made("merchant", id, `updated: ${updated.name}, ${updated.status}`);
    },
  },
  "fraud.evaluated": {
    description: "asks for a fraud evaluation",
    objects: ["evaluation"],
    async run(ctx) {
      const made = unwrap(
        await ctx.payments.POST("/v1/fraud/evaluations", {
          body: ctx.body("evaluation", { amount: 2500, currency: "USD" }),
        }),
      );
      ctx.made("evaluation", made.id, `${made.decision}, score ${made.score}, tx_id ${made.tx_id}`, [made.tx_id]);
    },
  },
  "payment.authorized": {
    description: "creates a card charge without capturing it",
    objects: ["charge", "merchant", "token"],
    run: async (ctx) => void (await cardCharge(ctx, { capture: false })),
  },
  "payment.captured": {
    description: "creates a captured card charge",
    objects: ["charge", "merchant", "token"],
    run: async (ctx) => void (await cardCharge(ctx, { capture: true })),
  },
  "payment.failed": {
    description: "charges the sandbox card that is always declined (4000000000000002)",
    objects: ["charge", "merchant", "token"],
    run: async (ctx) => void (await cardCharge(ctx, { capture: true, card: DECLINED })),
  },
  "payment.voided": {
    description: "creates an uncaptured card charge, then voids it",
    objects: ["charge", "merchant", "token"],
    async run(ctx) {
      const charge = await cardCharge(ctx, { capture: false });
      const voided = unwrap(await ctx.payments.POST("/v1/charges/{id}/void", { params: { path: { id: charge.id } } }));
      ctx.made("charge", voided.id, voided.status);
    },
  },
  "payment.refunded": {
    description: "creates a captured card charge, then refunds it in full",
    objects: ["refund", "charge", "merchant", "token"],
    async run(ctx) {
      const charge = await cardCharge(ctx, { capture: true });
      const refund = unwrap(
        await ctx.payments.POST("/v1/charges/{id}/refunds", {
          params: { path: { id: charge.id } },
          body: ctx.body("refund", { amount: charge.amount }),
        }),
      );
      ctx.made("refund", refund.id, `${refund.amount} ${refund.currency} of ${charge.id}`);
    },
  },
  "payment.refund_failed": {
    description:
      "charges the sandbox card whose refunds fail (4000000000005126), then refunds it: the refund fails after it is made",
    objects: ["refund", "charge", "merchant", "token"],
    async run(ctx) {
      const charge = await cardCharge(ctx, { capture: true, card: "4000000000005126" });
      const refund = unwrap(
        await ctx.payments.POST("/v1/charges/{id}/refunds", {
          params: { path: { id: charge.id } },
          body: ctx.body("refund", { amount: charge.amount }),
        }),
      );
      ctx.made("refund", refund.id, `${refund.amount} ${refund.currency} of ${charge.id}`);
    },
  },
  "payment.requires_action": {
    description: "charges the sandbox card that needs a 3-D Secure challenge (4000000000003220)",
    objects: ["charge", "merchant", "token"],
    run: async (ctx) => void (await cardCharge(ctx, { capture: true, card: CHALLENGED })),
  },
  "payment.expired": {
    description: "creates a Pix charge, then expires it (POST /v1/sandbox/charges/{id}/expire)",
    objects: ["charge", "merchant"],
    async run(ctx) {
      const charge = await pixCharge(ctx);
      const expired = unwrap(
        await ctx.payments.POST("/v1/sandbox/charges/{id}/expire", { params: { path: { id: charge.id } } }),
      );
      ctx.made("charge", expired.id, expired.status);
    },
  },
  "payment_link.completed": {
    description: "creates a payment link and pays it with a test card through its hosted page's operation",
    objects: ["payment_link", "payment", "merchant"],
    async run(ctx) {
      const body = ctx.body("payment_link", {
        merchant_id: "",
        amount: 2500,
        currency: "USD",
        description: "payments trigger",
      });
      if (body.merchant_id === "") body.merchant_id = await merchant(ctx);
      const link = unwrap(await ctx.payments.POST("/v1/payment_links", { body }));
      ctx.made("payment_link", link.id, link.url);
      const payment = unwrap(
        await ctx.payments.POST("/v1/payment_links/{id}/pay", {
          params: { path: { id: link.id } },
          body: ctx.body("payment", {
            page_token: await pageToken(ctx, link.id),
            payment_method: { type: "card" as const, number: SUCCEEDS, ...CARD },
          }),
        }),
      );
      ctx.made("payment", payment.charge_id, `${payment.status} through ${link.id}`);
    },
  },
  "cashout.created": {
    description: "funds a merchant with a captured charge, then creates a cashout",
    objects: ["cashout", "charge", "merchant", "token"],
    run: async (ctx) => void (await cashout(ctx)),
  },
  "cashout.reconciled": {
    description: "funds a merchant with a captured charge, then creates a cashout (its contents are final at once)",
    objects: ["cashout", "charge", "merchant", "token"],
    run: async (ctx) => void (await cashout(ctx)),
  },
  "cashout.paid": {
    description: "creates a cashout, then pays it (POST /v1/sandbox/cashouts/{id}/pay)",
    objects: ["cashout", "charge", "merchant", "token"],
    async run(ctx) {
      const made = await cashout(ctx);
      const paid = unwrap(
        await ctx.payments.POST("/v1/sandbox/cashouts/{id}/pay", { params: { path: { id: made.id } } }),
      );
      ctx.made("cashout", paid.id, paid.status);
    },
  },
  "cashout.failed": {
    description: "creates a cashout, then fails it (POST /v1/sandbox/cashouts/{id}/fail)",
    objects: ["cashout", "cashout_failure", "charge", "merchant", "token"],
    async run(ctx) {
      const made = await cashout(ctx);
      const failed = unwrap(
        await ctx.payments.POST("/v1/sandbox/cashouts/{id}/fail", {
          params: { path: { id: made.id } },
          body: ctx.body("cashout_failure", { failure_code: "could_not_process" as const }),
        }),
      );
      ctx.made("cashout", failed.id, `${failed.status}: ${failed.failure_code}`);
    },
  },
  "cashout.canceled": {
    description: "creates a cashout, then cancels it",
    objects: ["cashout", "charge", "merchant", "token"],
    async run(ctx) {
      const made = await cashout(ctx);
      const canceled = unwrap(
        await ctx.payments.POST("/v1/cashouts/{id}/cancel", { params: { path: { id: made.id } } }),
      );
      ctx.made("cashout", canceled.id, canceled.status);
    },
  },
  "dispute.created": {
    description: "creates a captured card charge, then opens a dispute on it (POST /v1/sandbox/charges/{id}/dispute)",
    objects: ["dispute", "charge", "merchant", "token"],
    run: async (ctx) => void (await dispute(ctx)),
  },
  "dispute.funds_withdrawn": {
    description: "creates a captured card charge, then opens a chargeback on it: its amount leaves the balance",
    objects: ["dispute", "charge", "merchant", "token"],
    run: async (ctx) => void (await dispute(ctx)),
  },
  "dispute.updated": {
    description: "opens a dispute, then submits evidence (POST /v1/disputes/{id})",
    objects: ["dispute_update", "dispute", "charge", "merchant", "token"],
    async run(ctx) {
      const opened = await dispute(ctx);
      const updated = unwrap(
        await ctx.payments.POST("/v1/disputes/{id}", {
          params: { path: { id: opened.id } },
          body: ctx.body("dispute_update", {
            evidence: { product_description: "payments trigger", customer_name: "Ada Lovelace" },
            submit: true,
          }),
        }),
      );
      ctx.made("dispute_update", updated.id, updated.status);
    },
  },
  "dispute.funds_reinstated": {
    description: "opens a dispute, then decides it for the merchant (POST /v1/sandbox/disputes/{id}/resolve)",
    objects: ["dispute_resolution", "dispute", "charge", "merchant", "token"],
    async run(ctx) {
      const opened = await dispute(ctx);
      const resolved = unwrap(
        await ctx.payments.POST("/v1/sandbox/disputes/{id}/resolve", {
          params: { path: { id: opened.id } },
          body: ctx.body("dispute_resolution", { outcome: "won" as const }),
        }),
      );
      ctx.made("dispute_resolution", resolved.id, resolved.status);
    },
  },
  "dispute.closed": {
    description: "opens a dispute, then accepts it (POST /v1/disputes/{id}/close)",
    objects: ["dispute", "charge", "merchant", "token"],
    async run(ctx) {
      const opened = await dispute(ctx);
      const closed = unwrap(
        await ctx.payments.POST("/v1/disputes/{id}/close", { params: { path: { id: opened.id } } }),
      );
      ctx.made("dispute", closed.id, closed.status);
    },
  },
  "service_key.created": {
    description: "creates a service key (scope merchants), then revokes it so no unused key is left",
    objects: ["service_key"],
    async run(ctx) {
      const key = await serviceKey(ctx);
      await revokeKey(ctx, key.id);
    },
  },
  "service_key.rotated": {
    description: "creates a service key, rotates it, then revokes it",
    objects: ["rotation", "service_key"],
    async run(ctx) {
      const key = await serviceKey(ctx);
      const rotated = unwrap(
        await ctx.payments.POST("/v1/service_keys/{id}/rotate", {
          params: { path: { id: key.id } },
          body: ctx.body("rotation", { grace_period_seconds: 0 }),
        }),
      );
      ctx.made("service_key", rotated.id, "rotated");
      await revokeKey(ctx, key.id);
    },
  },
  "service_key.revoked": {
    description: "creates a service key, then revokes it",
    objects: ["service_key"],
    async run(ctx) {
      const key = await serviceKey(ctx);
      await revokeKey(ctx, key.id);
    },
  },
  "webhook_endpoint.test": {
    description:
      "creates a webhook endpoint (on a closed local port unless --set url=… names yours), sends it a test " +
      "event, waits for the attempt, then deletes the endpoint",
    objects: ["webhook_endpoint"],
    async run(ctx) {
      const endpoint = unwrap(
        await ctx.payments.POST("/v1/webhook_endpoints", {
          body: ctx.body("webhook_endpoint", {
            url: "http://127.0.0.1:9/payments-trigger",
            enabled_events: ["webhook_endpoint.test" as const],
            description: "payments trigger",
          }),
        }),
      );
      ctx.made("webhook_endpoint", endpoint.id, endpoint.url);
      const delivery = unwrap(
        await ctx.payments.POST("/v1/webhook_endpoints/{id}/test", { params: { path: { id: endpoint.id } } }),
      );
      // Deleting the endpoint first would end the delivery unsent: wait for its one attempt.
      const done = await ctx.waitFor(`the test delivery ${delivery.id}`, async () => {
        const now = unwrap(
          await ctx.payments.GET("/v1/webhook_deliveries/{id}", { params: { path: { id: delivery.id } } }),
        );
        return now.attempt_count > 0 || now.status !== "pending" ? now : undefined;
      });
      const status = done.attempts[0]?.status_code ?? done.attempts[0]?.error ?? done.status;
      ctx.made("webhook_endpoint", endpoint.id, `test event ${delivery.event_id} sent: ${status}`);
      await deleteEndpoint(ctx, endpoint.id);
    },
  },
  "webhook_endpoint.disabled": {
    description:
      "creates a webhook endpoint on a local listener that answers 410 Gone, sends it a test event (a 410 " +
      "disables an endpoint), then deletes the endpoint; the server must reach this machine",
    objects: ["webhook_endpoint"],
    async run(ctx) {
      const gone = createServer((_req, res) => res.writeHead(410).end());
      await new Promise<void>((resolve) => gone.listen(0, "127.0.0.1", resolve));
      try {
        const url = `http://127.0.0.1:${(gone.address() as AddressInfo).port}/gone`;
        const endpoint = unwrap(
          await ctx.payments.POST("/v1/webhook_endpoints", {
            body: ctx.body("webhook_endpoint", {
              url,
              enabled_events: ["webhook_endpoint.test" as const],
              description: "payments trigger",
            }),
          }),
        );
        ctx.made("webhook_endpoint", endpoint.id, endpoint.url);
        unwrap(await ctx.payments.POST("/v1/webhook_endpoints/{id}/test", { params: { path: { id: endpoint.id } } }));
        const disabled = await ctx.waitFor(`${endpoint.id} to be disabled (a 410 from ${url})`, async () => {
          const now = unwrap(
            await ctx.payments.GET("/v1/webhook_endpoints/{id}", { params: { path: { id: endpoint.id } } }),
          );
          return now.status === "disabled" ? now : undefined;
        });
        ctx.made("webhook_endpoint", endpoint.id, `disabled: ${disabled.disabled_reason}`);
        await deleteEndpoint(ctx, endpoint.id);
      } finally {
        gone.closeAllConnections();
        gone.close();
      }
    },
  },
};

/** The event types with a trigger, in the contract's order of declaration is not kept: sorted. */
export const TRIGGER_TYPES = Object.keys(TRIGGERS).sort() as WebhookEventType[];

const isTriggerType = (type: string): type is WebhookEventType => Object.hasOwn(TRIGGERS, type);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs the trigger of `options.type` and returns what it made and the events about it. Refuses a
 * production key before sending anything: a trigger moves (sandbox) money and makes objects to show it.
 */
export async function trigger(options: TriggerOptions): Promise<TriggerResult> {
  const { type } = options;
  if (!isTriggerType(type)) {
    throw new TriggerError(`"${type}" is not an event type of this API; the types are: ${TRIGGER_TYPES.join(", ")}.`);
  }
  if (!options.apiKey.startsWith("key_test_")) {
    throw new TriggerError("Triggers run in the sandbox only: give a sandbox key (key_test_…).");
  }
  const definition: Trigger = TRIGGERS[type];
  const [main] = definition.objects;
  const overrides = (options.overrides ?? []).map((o) => ({ ...o, object: o.object ?? main }));
  for (const o of overrides) {
    if (!definition.objects.includes(o.object)) {
      throw new TriggerError(
        `The ${type} trigger sends no ${o.object} body; it sends ${definition.objects.join(", ")} (--set ${definition.objects[0]}:field=value).`,
      );
    }
  }
  const payments = createPaymentsClient({
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const waitMs = options.waitMs ?? 30_000;

  // The newest event before the trigger, to find the ones it makes; null when the key may not list events.
  const before = await payments.GET("/v1/events", { params: { query: { limit: 1 } } });
  const canListEvents = before.response.ok;
  const marker = before.data?.data[0]?.id;

  const created: CreatedObject[] = [];
  const ids = new Set<string>();
  const ctx: TriggerContext = {
    payments,
    baseUrl: options.baseUrl,
    body(object, defaults) {
      const body = structuredClone(defaults);
      for (const o of overrides) if (o.object === object) applyOverride(body, o.path, o.value);
      return body;
    },
    made(object, id, summary, related = []) {
      for (const ref of [id, ...related]) ids.add(ref);
      const entry = { object, id, summary };
      created.push(entry);
      options.onCreated?.(entry);
    },
    async waitFor(what, check) {
      const deadline = Date.now() + waitMs;
      for (;;) {
        const value = await check();
        if (value !== undefined) return value;
        if (Date.now() > deadline) throw new TriggerError(`Gave up waiting for ${what} after ${waitMs / 1000} s.`);
        await sleep(100);
      }
    },
  };
  await definition.run(ctx);
  if (!canListEvents) return { type, created, events: null };

  // The events that name an object the trigger made; the one asked for may follow a delivery, so wait for it.
  const about = (event: object) => Object.values(event).some((v) => typeof v === "string" && ids.has(v));
  const events = await ctx.waitFor(`a ${type} event`, async () => {
    const page = unwrap(
      await payments.GET("/v1/events", {
        params: { query: { limit: 100, ...(marker ? { ending_before: marker } : {}) } },
      }),
    );
    const found = page.data.filter(about).reverse();
    return found.some((e) => e.type === type) ? found : undefined;
  });
  return { type, created, events: events.map((e) => ({ id: e.id, type: e.type })) };
}
