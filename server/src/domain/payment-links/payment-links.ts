import type { Page, PageResult } from "../../store/port.ts";
import type { Charges } from "../charges/charges.ts";
import { LOCAL_METHODS, type LocalMethod } from "../charges/processor.ts";
import type { ChargeDoc } from "../charges/records.ts";
import type { AppStore } from "../collections.ts";
import type { Caller, Now } from "../kernel/caller.ts";
import type { OutcomeRecorder } from "../kernel/commit.ts";
import { commit } from "../kernel/commit.ts";
import { inEnvironment } from "../kernel/environment.ts";
import { DomainError, invalid, notFound } from "../kernel/errors.ts";
import { newId } from "../kernel/ids.ts";
import { assertMoney, type MoneyRules } from "../kernel/money.ts";
import { createdAt, iso } from "../kernel/time.ts";
import type { Merchants } from "../merchants/merchants.ts";
import type { MerchantDoc } from "../merchants/records.ts";
import type { Tokens } from "../vault/tokens.ts";
import type { PageTokens } from "./page-token.ts";
import type { AfterCompletion, PaymentLinkDoc, PaymentLinkMethod } from "./records.ts";
import { claimUse, linkUnavailable } from "./usage.ts";

// Payment links and the public payment their hosted page makes (spec/resources/payment-links.tsp; the
// page itself is server/src/http/pay-page.ts). A link fixes merchant, amount and currency; the public
// operation payPaymentLink can only ever make a charge of exactly those, through charges.create (so every
// check a charge gets, fraud evaluation included, applies), counted against the link in the charge's own
// transaction (usage.ts).

export interface PaymentLinkCreate {
  merchant_id: string;
  amount: number;
  currency: string;
  description: string;
  payment_methods?: PaymentLinkMethod[] | undefined;
  expires_at?: string | undefined;
  max_uses?: number | undefined;
  after_completion?: AfterCompletion | undefined;
  metadata?: Record<string, string> | undefined;
}

export interface PaymentLinkUpdate {
  active?: boolean | undefined;
  description?: string | undefined;
  expires_at?: string | null | undefined;
  metadata?: Record<string, string> | undefined;
}

export type PayMethodInput =
  | { type: "card"; number: string; exp_month: number; exp_year: number; cvc: string; holder: string }
  | { type: "pix" | "boleto" | "oxxo" | "spei" }
  | { type: "sepa_debit"; iban: string; account_holder: string };

export interface PaymentLinkPay {
  page_token: string;
  payment_method: PayMethodInput;
  email?: string | undefined;
}

/** What the HTTP layer knows of a public request: there is no key, so no Caller. */
export interface PayContext {
  requestId: string;
  /** The client's address, passed to the charge (customer.ip) for fraud evaluation. */
  ip?: string | undefined;
  /** The Idempotency-Key's recorder, when the request carries one; gets the LinkPayment. */
  outcome?: OutcomeRecorder | undefined;
}

/** The outcome of a payment through a link. */
export interface LinkPayment {
  link: PaymentLinkDoc;
  charge: ChargeDoc;
}

/** Whether a link takes payments now, and if not, why (the hosted page shows each case its own way). */
export type LinkState = "open" | "inactive" | "expired" | "used_up";

export function linkState(link: PaymentLinkDoc, merchant: MerchantDoc | null, now: Date): LinkState {
  if (!link.active || merchant?.status !== "active") return "inactive";
  if (link.expires_at !== null && link.expires_at <= iso(now)) return "expired";
  if (link.max_uses !== null && link.claimed >= link.max_uses) return "used_up";
  return "open";
}

function unavailableDetail(state: Exclude<LinkState, "open">, link: PaymentLinkDoc): string {
  switch (state) {
    case "inactive":
      return "This payment link is not taking payments.";
    case "expired":
      return `This payment link expired at ${link.expires_at}.`;
    case "used_up":
      return `This payment link has taken all the payments it allows (max_uses ${link.max_uses}).`;
  }
}

/** The methods a link may offer in `currency`: a card, and the local methods paid in that currency. */
export function methodsFor(currency: string): PaymentLinkMethod[] {
  const local = (Object.keys(LOCAL_METHODS) as LocalMethod[]).filter((m) => LOCAL_METHODS[m].currency === currency);
  return ["card", ...local];
}

/** The vault's field names → the pay operation's, so a 400 names the field the payer typed. */
const CARD_PARAMS: Record<string, string> = {
  card: "payment_method.number",
  holder: "payment_method.holder",
  exp_month: "payment_method.exp_month",
  exp_year: "payment_method.exp_year",
  cvc: "payment_method.cvc",
};

export interface PaymentLinksDeps {
  store: AppStore;
  now: Now;
  merchants: Merchants;
  tokens: Tokens;
  charges: Charges;
  money: MoneyRules;
  pageTokens: PageTokens;
  /** The server's public address: a link's url is `<baseUrl>/pay/<id>`. */
  baseUrl: () => string;
}

export function createPaymentLinks(deps: PaymentLinksDeps) {
  const { store, now } = deps;

  async function load(livemode: boolean, id: string): Promise<PaymentLinkDoc> {
    return inEnvironment(await store.get("payment_links", id), livemode, "payment link", id);
  }

  /** A future instant in the stored format, or a 400 naming `param`. */
  function futureInstant(value: string, param: string): string {
    const at = new Date(value);
    if (Number.isNaN(at.getTime())) throw invalid(param, "must be an RFC 3339 date-time");
    if (at.getTime() <= now().getTime()) throw invalid(param, "must be in the future");
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

  /** Tokenizes the payer's card for this one charge; a refused card is a 400 naming the pay operation's field. */
  async function tokenize(caller: Caller, card: Extract<PayMethodInput, { type: "card" }>) {
    try {
      return await deps.tokens.create(caller, {
        card: card.number,
        holder: card.holder,
        exp_month: card.exp_month,
        exp_year: card.exp_year,
        cvc: card.cvc,
      });
    } catch (err) {
      if (!(err instanceof DomainError) || err.param === undefined || !(err.param in CARD_PARAMS)) throw err;
      const rename = (param: string | undefined) => (param === undefined ? undefined : (CARD_PARAMS[param] ?? param));
      const message = err.message.startsWith(`${err.param}: `)
        ? `${rename(err.param)}: ${err.message.slice(err.param.length + 2)}`
        : err.message;
      throw new DomainError(err.code, message, {
        ...(err.param === undefined ? {} : { param: rename(err.param) as string }),
        ...(err.errors ? { errors: err.errors.map((e) => ({ ...e, param: rename(e.param) as string })) } : {}),
      });
    }
  }

  return {
    load,

    /** The hosted page's address for a link (PaymentLink.url). */
    url: (link: PaymentLinkDoc) => `${deps.baseUrl()}/pay/${link.id}`,

    async create(caller: Caller, input: PaymentLinkCreate): Promise<PaymentLinkDoc> {
      assertMoney(input.amount, input.currency, deps.money);
      const methods = checkMethods(input.payment_methods ?? methodsFor(input.currency), input.currency);
      const expiresAt = input.expires_at === undefined ? null : futureInstant(input.expires_at, "expires_at");
      const after = input.after_completion === undefined ? null : checkAfterCompletion(input.after_completion);
      const merchant = await deps.merchants.loadActive(
        caller.livemode,
        input.merchant_id,
        "merchant_id",
        "take payments",
      );
      const at = createdAt(now());
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
      filter: { merchant_id?: string | undefined; active?: boolean | undefined },
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
      const set: Partial<PaymentLinkDoc> = { updated_at: iso(now()) };
      if (changes.active !== undefined) set.active = changes.active;
      if (changes.description !== undefined) set.description = changes.description;
      if (changes.expires_at !== undefined) {
        set.expires_at = changes.expires_at === null ? null : futureInstant(changes.expires_at, "expires_at");
      }
      if (changes.metadata !== undefined) set.metadata = changes.metadata;
      // Only the merchant's own fields change here; the counts are moved by payments alone (usage.ts).
      const updated = await store.update("payment_links", id, { set });
      if (!updated) throw notFound("payment link", id);
      return updated;
    },

    /** The environment of a link, by id alone (public requests have no key to say it); null if none. */
    async livemodeOf(id: string): Promise<boolean | null> {
      return (await store.get("payment_links", id))?.livemode ?? null;
    },

    /**
     * What the hosted page shows for a link, without a key: the link, its merchant's name, whether it
     * takes payments, and (when it does) a fresh page token. A link id is global: any environment's.
     */
    async page(id: string) {
      const link = await store.get("payment_links", id);
      if (!link) throw notFound("payment link", id);
      const merchant = await store.get("merchants", link.merchant_id);
      const at = now();
      const state = linkState(link, merchant, at);
      return {
        link,
        merchantName: merchant?.name ?? "",
        state,
        pageToken: state === "open" ? deps.pageTokens.issue(link.id, at) : null,
      };
    },

    /**
     * The public payment (payPaymentLink): checks the page token and the link, tokenizes a card for this
     * one charge (its token is erased afterwards: the merchant gets no reusable card), then makes the
     * charge for the link's merchant, amount and currency, counted against the link in the charge's
     * transaction. A declined charge is an answer, not an error.
     */
    async pay(id: string, input: PaymentLinkPay, ctx: PayContext): Promise<LinkPayment> {
      // A link's id is public (it is in its URL), so saying it does not exist tells nothing a token would guard.
      const link = await store.get("payment_links", id);
      if (!link) throw notFound("payment link", id);
      deps.pageTokens.verify(id, input.page_token, now());
      const state = linkState(link, await store.get("merchants", link.merchant_id), now());
      if (state !== "open") throw linkUnavailable(unavailableDetail(state, link));
      const method = input.payment_method;
      if (!link.payment_methods.includes(method.type)) {
        throw invalid("payment_method.type", `this link takes ${link.payment_methods.join(", ")}`);
      }

      // The link's environment and merchant, never the payer's choice. No scopes: it calls use cases directly.
      const caller: Caller = {
        keyId: `payment_link:${link.id}`,
        livemode: link.livemode,
        scopes: [],
        keyPrefix: "payment_link",
        requestId: ctx.requestId,
      };
      const token = method.type === "card" ? await tokenize(caller, method) : null;
      const outer = ctx.outcome;
      const recording: Caller = outer
        ? { ...caller, outcome: { record: (tx, charge) => outer.record(tx, { link, charge: charge as ChargeDoc }) } }
        : caller;
      const customer = {
        ...(input.email === undefined ? {} : { email: input.email }),
        ...(ctx.ip === undefined ? {} : { ip: ctx.ip }),
      };
      try {
        const charge = await deps.charges.create(
          recording,
          {
            merchant_id: link.merchant_id,
            amount: link.amount,
            currency: link.currency,
            payment_method: token
              ? { type: "card", token: token.id }
              : (method as Exclude<PayMethodInput, { type: "card" }>),
            description: link.description,
            ...(Object.keys(customer).length > 0 ? { customer } : {}),
          },
          { paymentLinkId: link.id, inTransaction: (tx, made) => claimUse(tx, now, link, made) },
        );
        return { link, charge };
      } finally {
        if (token) await deps.tokens.delete(caller, token.id);
      }
    },
  };
}

export type PaymentLinks = ReturnType<typeof createPaymentLinks>;
