import type { components } from "@payments/contract/types";
import type { Charges } from "../charges/charges.ts";
import type { ChargeDoc } from "../charges/records.ts";
import type { Caller } from "../kernel/caller.ts";
import type { Clock } from "../kernel/clock.ts";
import type { OutcomeRecorder } from "../kernel/commit.ts";
import { DomainError, invalid, notFound } from "../kernel/errors.ts";
import type { Merchants } from "../merchants/merchants.ts";
import type { Tokens } from "../vault/tokens.ts";
import type { PageTokens } from "./page-token.ts";
import type { PaymentLinkDoc, PaymentLinkStore } from "./records.ts";
import { linkState, unavailableDetail } from "./state.ts";
import { claimUse, linkUnavailable } from "./usage.ts";

// The hosted page and the public payment it makes (payPaymentLink, spec/resources/payment-links.tsp; the
// page itself is server/src/http/pay-page.ts). No key: the payer is nobody's caller, so the link itself
// fixes the environment, the merchant, the amount and the currency, and the charge is made through
// charges.create (every check a charge gets, fraud evaluation included, applies), counted against the
// link in the charge's own transaction (usage.ts).

/** How the payer pays (the contract's PaymentLinkPaymentMethodInput). */
export type PayMethodInput = components["schemas"]["PaymentLinkPaymentMethodInput"];

/** payPaymentLink's body (the contract's PaymentLinkPay). */
export type PaymentLinkPay = components["schemas"]["PaymentLinkPay"];

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

/** The vault's field names → the pay operation's, so a 400 names the field the payer typed. */
const CARD_PARAMS: Record<string, string> = {
  card: "payment_method.number",
  holder: "payment_method.holder",
  exp_month: "payment_method.exp_month",
  exp_year: "payment_method.exp_year",
  cvc: "payment_method.cvc",
};

/** What the public payment works with. */
export interface PaymentDeps {
  store: PaymentLinkStore;
  clock: Clock;
  tokens: Tokens;
  charges: Charges;
  /** The link's merchant: whether it takes payments, and its name on the page. */
  merchants: Pick<Merchants, "find">;
  pageTokens: PageTokens;
  /** The server's public address: a 3-D Secure challenge returns the payer to `<baseUrl>/pay/<id>/return`. */
  baseUrl: () => string;
}

export function payments(deps: PaymentDeps) {
  const { store, clock } = deps;

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
      const rename = (param: string) => CARD_PARAMS[param] ?? param;
      const message = err.message.startsWith(`${err.param}: `)
        ? `${rename(err.param)}: ${err.message.slice(err.param.length + 2)}`
        : err.message;
      throw new DomainError(err.code, message, {
        param: rename(err.param),
        ...(err.errors
          ? { errors: err.errors.map((e) => ({ ...e, param: e.param === undefined ? undefined : rename(e.param) })) }
          : {}),
      });
    }
  }

  return {
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
      const merchant = await deps.merchants.find(link.merchant_id);
      // Whether the link is open is a question for its environment's clock; the page token, given to a
      // real payer's browser, lives on the server's own.
      const state = linkState(link, merchant, clock.now(link.livemode));
      return {
        link,
        merchantName: merchant?.name ?? "",
        state,
        pageToken: state === "open" ? deps.pageTokens.issue(link.id, clock.real()) : null,
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
      deps.pageTokens.verify(id, input.page_token, clock.real());
      const state = linkState(link, await deps.merchants.find(link.merchant_id), clock.now(link.livemode));
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
      // A card is tokenized for this one charge; any other method goes to the charge as the payer gave it.
      const { token, paymentMethod } =
        method.type === "card"
          ? await tokenize(caller, method).then((made) => ({
              token: made,
              paymentMethod: { type: "card" as const, token: made.id },
            }))
          : { token: null, paymentMethod: method };
      const outer = ctx.outcome;
      const recording: Caller = outer
        ? {
            ...caller,
            // cast: commit() hands the recorder what charges.create's transaction returns (the ChargeDoc), typed unknown.
            outcome: { record: (tx, charge) => outer.record(tx, { link, charge: charge as ChargeDoc }) },
          }
        : caller;
      const customer = {
        ...(input.email === undefined ? {} : { email: input.email }),
        ...(ctx.ip === undefined ? {} : { ip: ctx.ip }),
      };
      // A card waiting for 3-D Secure still needs its token to be authorized once the payer answers: the
      // challenge erases it then (charges/three-d-secure.ts, `erase_token`).
      let waiting = false;
      try {
        const charge = await deps.charges.create(
          recording,
          {
            merchant_id: link.merchant_id,
            amount: link.amount,
            currency: link.currency,
            payment_method: paymentMethod,
            description: link.description,
            ...(Object.keys(customer).length > 0 ? { customer } : {}),
            // After a 3-D Secure challenge the issuer sends the payer back to the hosted page's outcome.
            return_url: `${deps.baseUrl()}/pay/${link.id}/return`,
          },
          {
            paymentLinkId: link.id,
            singleUseToken: token !== null,
            inTransaction: (tx, made) => claimUse(tx, clock, link, made),
          },
        );
        waiting = charge.status === "requires_action";
        return { link, charge };
      } finally {
        if (token && !waiting) await deps.tokens.delete(caller, token.id);
      }
    },
  };
}
