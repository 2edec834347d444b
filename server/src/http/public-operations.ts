import { OPERATIONS } from "@payments/contract/operations";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { Domain } from "../domain/index.ts";
import { DomainError } from "../domain/kernel/errors.ts";
import type { OperationId } from "../domain/kernel/operations.ts";
import { isRecord } from "../guards.ts";
import { PUBLIC_LIVEMODE } from "./idempotency.ts";
import { locals } from "./locals.ts";
import { crossSiteRefusal } from "./page-security.ts";

// The public operations (`security: []` in the contract), which take no key, and how the transport
// defends them, in one place. Health probes need nothing; the hosted page's payment (payPaymentLink,
// spec/resources/payment-links.tsp) needs a same-origin guard, the environment of its link for the
// idempotency middleware (there is no caller to take it from), and rate limits of its own per link and
// per address (rate-limits.ts, which finds its requests by `payPath`).

/** The public pay operation's path, from the generated contract so it is written in one place, the spec. */
export const payPath = (() => {
  const op = OPERATIONS.find((o) => o.operationId === "payPaymentLink");
  if (!op) throw new Error("the contract has no payPaymentLink operation");
  const [before, after = ""] = op.path.split("{id}");
  const literal = (text: string | undefined) => (text ?? "").replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  /** Group 1: the link id. */
  const pattern = new RegExp(`^${literal(before)}([^/]+)${literal(after)}$`);
  return {
    /** The path of a link's payment, as the hosted page posts to it. */
    of: (linkId: string) => op.path.replace("{id}", encodeURIComponent(linkId)),
    /** The link id a request path pays, or null when the path is not the pay operation's. */
    linkOf: (path: string) => pattern.exec(path)?.[1] ?? null,
  };
})();

/**
 * The path Adyen posts its notifications to (receiveAdyenNotifications), from the generated contract: its
 * requests have a rate limit of their own (rate-limits.ts), which counts only the ones refused.
 */
export const adyenNotificationsPath = (() => {
  const op = OPERATIONS.find((o) => o.operationId === "receiveAdyenNotifications");
  if (!op) throw new Error("the contract has no receiveAdyenNotifications operation");
  return op.path;
})();

const forbidden = (message: string) => new DomainError("forbidden", message);

/**
 * The public pay operation's guard against cross-site posting (page-security.ts crossSiteRefusal, without
 * requiring an Origin): only the server's own pages may pay from a browser. Requests from no browser
 * (curl, a server) still need the page token that only the page carries
 * (domain/payment-links/page-token.ts). Nothing answers CORS preflights, so another site's script cannot
 * even send the JSON body this operation takes.
 */
export function sameOriginOnly(publicUrl: () => string) {
  return (req: Request, _res: Response, next: NextFunction) => {
    const refused = crossSiteRefusal(req, publicUrl(), { requireOrigin: false });
    if (refused !== null) {
      return next(forbidden(`Payments are taken only from this server's own payment page (${refused}).`));
    }
    next();
  };
}

/** Tells the idempotency middleware the environment of the link a public payment is for (it has no caller). */
export function paymentLinkEnvironment(domain: Domain) {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      locals(res)[PUBLIC_LIVEMODE] = (await domain.paymentLinks.livemodeOf(String(req.params.id))) ?? false;
      next();
    } catch (err) {
      next(err);
    }
  };
}

/**
 * Tells the idempotency middleware the environment of Adyen's notification (receiveAdyenNotifications): its
 * `live` flag (production's from Adyen's live environment). Adyen sends no Idempotency-Key (each item's
 * dedupe key makes it exactly-once), but a client that adds one must not meet a 500.
 */
function adyenNotificationEnvironment(req: Request, res: Response, next: NextFunction) {
  locals(res)[PUBLIC_LIVEMODE] = isRecord(req.body) && req.body.live === "true";
  next();
}

/**
 * The guards of each public operation that need no stored data (how it defends itself as its exposure
 * requires): the server's, and the sandbox mock's front's (front.ts createStatelessFront).
 */
export function publicRequestGuards(publicUrl: () => string): Partial<Record<OperationId, RequestHandler[]>> {
  return {
    payPaymentLink: [sameOriginOnly(publicUrl)],
  };
}

/**
 * The guards of each public operation that needs one: each defends itself (publicRequestGuards) and
 * must tell the idempotency middleware the environment of the object it acts on.
 */
export function publicGuards(domain: Domain, publicUrl: () => string): Partial<Record<OperationId, RequestHandler[]>> {
  const stateless = publicRequestGuards(publicUrl);
  return {
    payPaymentLink: [...(stateless.payPaymentLink ?? []), paymentLinkEnvironment(domain)],
    receiveAdyenNotifications: [adyenNotificationEnvironment],
  };
}
