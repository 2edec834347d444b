import type { components } from "@payments/contract/types";
import type { Page, PageResult } from "../../store/port.ts";
import { LOCAL_METHODS } from "../charges/processor.ts";
import type { Caller } from "../kernel/caller.ts";
import { commit } from "../kernel/commit.ts";
import { inEnvironment } from "../kernel/environment.ts";
import { invalid, notFound } from "../kernel/errors.ts";
import { newId } from "../kernel/ids.ts";
import { assertMoney, type MoneyRules } from "../kernel/money.ts";
import type { QueryParams } from "../kernel/operations.ts";
import { iso } from "../kernel/time.ts";
import type { Merchants } from "../merchants/merchants.ts";
import type { LinkPayment, PayContext, PaymentLinkPay } from "./pay.ts";
import { type PaymentDeps, payments } from "./pay.ts";
import type { AfterCompletion, PaymentLinkDoc, PaymentLinkMethod } from "./records.ts";
import type { LinkState } from "./state.ts";
import { methodsFor } from "./state.ts";

// Payment links (spec/resources/payment-links.tsp): a merchant's shareable link to the hosted payment
// page, fixing merchant, amount and currency. What the page shows and the public payment it makes are
// pay.ts.

/** createPaymentLink's body (the contract's PaymentLinkCreate). */
export type PaymentLinkCreate = components["schemas"]["PaymentLinkCreate"];

/** updatePaymentLink's body (the contract's PaymentLinkUpdate). */
export type PaymentLinkUpdate = components["schemas"]["PaymentLinkUpdate"];

export interface PaymentLinksDeps extends Omit<PaymentDeps, "merchants"> {
  merchants: Merchants;
  money: MoneyRules;
  /** The server's public address: a link's url is `<baseUrl>/pay/<id>`. */
  baseUrl: () => string;
}

export function createPaymentLinks(deps: PaymentLinksDeps): PaymentLinks {
  const { store, clock } = deps;

  async function load(livemode: boolean, id: string): Promise<PaymentLinkDoc> {
    return inEnvironment(await store.get("payment_links", id), livemode, "payment link", id);
  }

  /** An instant in the future of the environment's clock, in the stored format, or a 400 naming `param`. */
  function futureInstant(livemode: boolean, value: string, param: string): string {
    const at = new Date(value);
    if (Number.isNaN(at.getTime())) throw invalid(param, "must be an RFC 3339 date-time");
    if (at.getTime() <= clock.now(livemode).getTime()) throw invalid(param, "must be in the future");
    return iso(at);
  }

  function checkMethods(methods: PaymentLinkMethod[], currency: string): PaymentLinkMethod[] {
    const allowed = methodsFor(currency);
    for (const method of methods) {
      if (!allowed.includes(method)) {
        const required = method === "card" ? currency : LOCAL_METHODS[method].currency;
        throw invalid("payment_methods", `${method} takes ${required}, not ${currency}`);
      }
    }
    if (new Set(methods).size !== methods.length) throw invalid("payment_methods", "must not repeat a method");
    return methods;
  }

  function checkAfterCompletion(after: AfterCompletion): AfterCompletion {
    if (after.type === "redirect") {
      let protocol = "";
      try {
        protocol = new URL(after.url).protocol;
      } catch {
        // reported below
      }
      if (protocol !== "https:" && protocol !== "http:") {
        throw invalid("after_completion.url", "must be an http or https address");
      }
    }
    return after;
  }

  return {
    load,

    ...payments(deps),

    /** The hosted page's address for a link (PaymentLink.url). */
    url: (link: PaymentLinkDoc) => `${deps.baseUrl()}/pay/${link.id}`,

    async create(caller: Caller, input: PaymentLinkCreate): Promise<PaymentLinkDoc> {
      assertMoney(input.amount, input.currency, deps.money);
      const methods = checkMethods(input.payment_methods ?? methodsFor(input.currency), input.currency);
      const expiresAt =
        input.expires_at === undefined ? null : futureInstant(caller.livemode, input.expires_at, "expires_at");
      const after = input.after_completion === undefined ? null : checkAfterCompletion(input.after_completion);
      const merchant = await deps.merchants.loadActive(
        caller.livemode,
        input.merchant_id,
        "merchant_id",
        "take payments",
      );
      const at = clock.createdAt(caller.livemode);
      const link: PaymentLinkDoc = {
        id: newId("plink"),
        livemode: caller.livemode,
        created_at: at,
        updated_at: at,
        merchant_id: merchant.id,
        amount: input.amount,
        currency: input.currency,
        description: input.description,
        payment_methods: methods,
        active: true,
        expires_at: expiresAt,
        max_uses: input.max_uses ?? null,
        uses: 0,
        pending_uses: 0,
        claimed: 0,
        after_completion: after,
        metadata: input.metadata ?? {},
      };
      return commit(store, caller, async (tx) => {
        await tx.insert("payment_links", link);
        return link;
      });
    },

    get: (caller: Caller, id: string) => load(caller.livemode, id),

    list: (
      caller: Caller,
      filter: Pick<QueryParams<"listPaymentLinks">, "merchant_id" | "active">,
      page: Page,
    ): Promise<PageResult<PaymentLinkDoc>> =>
      store.list(
        "payment_links",
        {
          livemode: caller.livemode,
          ...(filter.merchant_id ? { merchant_id: filter.merchant_id } : {}),
          ...(filter.active === undefined ? {} : { active: filter.active }),
        },
        page,
      ),

    async update(caller: Caller, id: string, changes: PaymentLinkUpdate): Promise<PaymentLinkDoc> {
      await load(caller.livemode, id);
      const set: Partial<PaymentLinkDoc> = { updated_at: iso(clock.now(caller.livemode)) };
      if (changes.active !== undefined) set.active = changes.active;
      if (changes.description !== undefined) set.description = changes.description;
      if (changes.expires_at !== undefined) {
        set.expires_at =
          changes.expires_at === null ? null : futureInstant(caller.livemode, changes.expires_at, "expires_at");
      }
      if (changes.metadata !== undefined) set.metadata = changes.metadata;
      // Only the merchant's own fields change here; the counts are moved by payments alone (usage.ts).
      const updated = await store.update("payment_links", id, { set });
      if (!updated) throw notFound("payment link", id);
      return updated;
    },

    /**
     * How many of the environment's active links expire after `from` and by `to` (a link has no job: it
     * is expired whenever its environment's clock is past its `expires_at`; the sandbox clock's advance
     * reports how many it expired).
     */
    async expiringBetween(livemode: boolean, from: Date, to: Date): Promise<number> {
      const links = await store.findAll("payment_links", { livemode, active: true, expires_at: { $gt: iso(from) } });
      return links.filter((link) => link.expires_at !== null && link.expires_at <= iso(to)).length;
    },
  };
}

/** The payment links area's service (spec/resources/payment-links.tsp), the hosted page and its payment included. */
export interface PaymentLinks {
  /** The hosted page's address for a link (PaymentLink.url). */
  url: (link: PaymentLinkDoc) => string;
  create(caller: Caller, input: PaymentLinkCreate): Promise<PaymentLinkDoc>;
  get: (caller: Caller, id: string) => Promise<PaymentLinkDoc>;
  list: (
    caller: Caller,
    filter: Pick<QueryParams<"listPaymentLinks">, "merchant_id" | "active">,
    page: Page,
  ) => Promise<PageResult<PaymentLinkDoc>>;
  update(caller: Caller, id: string, changes: PaymentLinkUpdate): Promise<PaymentLinkDoc>;
  /**
   * How many of the environment's active links expire after `from` and by `to` (a link has no job: it
   * is expired whenever its environment's clock is past its `expires_at`; the sandbox clock's advance
   * reports how many it expired).
   */
  expiringBetween(livemode: boolean, from: Date, to: Date): Promise<number>;
  livemodeOf(id: string): Promise<boolean | null>;
  page(id: string): Promise<{
    link: PaymentLinkDoc;
    merchantName: string;
    state: LinkState;
    pageToken: string | null;
  }>;
  pay(id: string, input: PaymentLinkPay, ctx: PayContext): Promise<LinkPayment>;
  load: (livemode: boolean, id: string) => Promise<PaymentLinkDoc>;
}
