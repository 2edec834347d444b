import express, { type Request, type Response, Router } from "express";
import type { ChargeDoc } from "../domain/charges/records.ts";
import type { Domain } from "../domain/index.ts";
import { DomainError } from "../domain/kernel/errors.ts";
import { isRecord } from "../guards.ts";
import { CSP_BASE, crossSiteRefusal, pageHeaders } from "./page-security.ts";
import { formatAmount, localeOf, renderTemplate } from "./pay-page.ts";

// The sandbox issuer's 3-D Secure challenge page (NextAction `redirect_to_url` in
// spec/resources/charges.tsp; docs/three-d-secure.md "The issuer's challenge page"): GET /3ds/{tx_id}?t=…
// shows the charge and a Complete and a Fail button; their form POSTs to the same address answer the
// challenge (domain/charges/three-d-secure.ts) and send the payer to the charge's return_url with
// `tx_id`, or show the outcome. A plain HTML form, no script: keyboard-usable and readable by a screen
// reader as it is. Only the link the charge's next_action gave (its `t` token) opens or answers it.
//
// GET or POST /3ds/{tx_id}/return?t=…: where an acquirer that runs the challenge itself (Adyen) sends the
// payer back from the issuer's page, with its `redirectResult` in the query (GET) or the form (POST). The
// charge is finished at the acquirer (domain/charges/three-d-secure.ts returnFromIssuer) and the payer sent
// on to the charge's return_url with `tx_id`, or shown the outcome. No origin check there: the acquirer's
// page posts it from its own site by design; the link's token and the acquirer's check of its
// redirectResult are its authority.

/** No script at all; the hosted page's stylesheet; forms post here, or to the return_url's origin. */
function challengeCsp(returnUrl: string | null): string {
  const origin = returnUrl ? new URL(returnUrl).origin : null;
  return [
    ...CSP_BASE,
    "style-src 'self'",
    "img-src 'self'",
    // A redirect after a form post must also be allowed by form-action (the return_url's origin).
    `form-action 'self'${origin ? ` ${origin}` : ""}`,
  ].join("; ");
}

const PAGE = `<!doctype html>
<html lang="{{lang}}">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="robots" content="noindex">
  <title>{{title}}</title>
  <link rel="icon" href="/pay/assets/favicon.svg" type="image/svg+xml">
  <link rel="stylesheet" href="/pay/assets/pay.css">
</head>
<body>
  <p class="test-banner">Test issuer: this page stands in for the card issuer's 3-D Secure check. No real bank is asked.</p>
  <main class="sheet" id="challenge" data-status="{{status}}">
    <header class="summary">
      <p class="merchant">{{merchant}}</p>
      <p class="amount">{{amount}}</p>
      <p class="description">Card ending {{last4}}</p>
    </header>
    <h1>{{title}}</h1>
    <p class="notice-text" id="message" role="status">{{message}}</p>
    <!--if:open-->
    <form method="post" action="{{action}}" class="challenge-answer">
      <button class="pay" type="submit" name="outcome" value="complete">Complete</button>
      <button class="secondary" type="submit" name="outcome" value="fail">Fail</button>
    </form>
    <!--endif:open-->
    <!--if:back-->
    <p><a href="{{return_url}}" id="return">Return to {{merchant}}</a></p>
    <!--endif:back-->
  </main>
</body>
</html>
`;

const OUTCOME: Record<string, { title: string; message: string }> = {
  requires_action: {
    title: "Confirm this payment",
    message: "Your bank asks you to confirm this payment. Choose Complete to confirm it, or Fail to refuse it.",
  },
  authorized: { title: "Payment confirmed", message: "You confirmed the payment; the seller has been told." },
  captured: { title: "Payment confirmed", message: "You confirmed the payment; the seller has been told." },
  // The acquirer took the payment and decides it later (Adyen's Received/Pending): the seller hears the outcome.
  pending: {
    title: "Payment being confirmed",
    message: "You confirmed the payment; your bank is still deciding it, and the seller will be told the outcome.",
  },
  declined: { title: "Payment not confirmed", message: "The payment was not confirmed and nothing was charged." },
  expired: { title: "This check has expired", message: "It was not answered in time; nothing was charged." },
};

const outcomeOf = (status: string) =>
  OUTCOME[status] ?? { title: "Payment checked", message: "This payment no longer needs your confirmation." };

/** `return_url` with `tx_id` added, so the merchant's page knows which charge came back. */
export function returnTo(returnUrl: string, chargeId: string): string {
  const url = new URL(returnUrl);
  url.searchParams.set("tx_id", chargeId);
  return url.toString();
}

/**
 * The answer for a challenge link that opens nothing (an unknown charge, a wrong token): also what a
 * sandbox's challenge path with an unknown or deleted sandbox id answers (sandbox-pages.ts).
 */
export function challengeNotFound(res: Response): void {
  pageHeaders(res, challengeCsp(null));
  res.status(404).type("text").send("This 3-D Secure check does not exist.");
}

/**
 * `pathPrefix`: where this app's pages are reached, before their own path: nothing for the account's,
 * `/sandboxes/{id}` for a sandbox on demand's (sandbox-pages.ts hands them over without it); the
 * page's form posts back there.
 */
export function threeDSecurePages(deps: { domain: Domain; publicUrl: () => string; pathPrefix?: string }): Router {
  const { domain } = deps;
  const router = Router();

  async function render(req: Request, res: Response, charge: ChargeDoc, status: number) {
    const locale = localeOf(req);
    const merchant = await domain.merchants.load(charge.livemode, charge.merchant_id);
    const returnUrl = charge.three_d_secure?.return_url ?? null;
    // An acquirer's challenge (Adyen) is answered on the issuer's page, never with these buttons.
    const open = charge.status === "requires_action" && !charge.three_d_secure?.acquirer_challenge;
    const { title, message } = outcomeOf(charge.status);
    pageHeaders(res, challengeCsp(returnUrl));
    // `no-referrer` (pageHeaders) makes Chromium send `Origin: null` with the page's own form post, which
    // the cross-site check rightly refuses; `same-origin` still sends no referrer (nor the link's token)
    // to another site, the return_url included.
    res.setHeader("Referrer-Policy", "same-origin");
    res
      .status(status)
      .type("html")
      .send(
        renderTemplate(
          PAGE,
          {
            lang: locale,
            title,
            message,
            status: charge.status,
            merchant: merchant.name,
            amount: formatAmount(charge.amount, charge.currency, locale),
            last4: charge.payment_method.last4 ?? "",
            action: `${deps.pathPrefix ?? ""}${req.originalUrl}`,
            return_url: returnUrl ? returnTo(returnUrl, charge.id) : "",
          },
          { open, back: !open && returnUrl !== null },
        ),
      );
  }

  /** The charge the link names, or a 404 page (an unknown charge and a wrong token look alike). */
  async function challengeOf(req: Request, res: Response): Promise<ChargeDoc | null> {
    try {
      return await domain.charges.challengeOf(String(req.params.id), String(req.query.t ?? ""));
    } catch (err) {
      if (!(err instanceof DomainError && err.code === "not_found")) throw err;
      challengeNotFound(res);
      return null;
    }
  }

  /** The payer back from the acquirer's issuer page: the charge finished, then return_url or the outcome. */
  async function back(req: Request, res: Response, redirectResult: unknown) {
    const id = String(req.params.id);
    const token = String(req.query.t ?? "");
    let charge: ChargeDoc;
    try {
      charge = await domain.charges.returnFromIssuer(
        id,
        token,
        typeof redirectResult === "string" ? redirectResult : "",
      );
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      const found = await challengeOf(req, res);
      if (!found) return;
      // Finished meanwhile by another return (a reload, a second tab), or sent back without its result.
      if (err.code !== "conflict" && err.code !== "invalid_state_transition" && err.code !== "invalid_request")
        throw err;
      return render(req, res, found, err.code === "invalid_request" ? 400 : 409);
    }
    const returnUrl = charge.three_d_secure?.return_url ?? null;
    if (returnUrl && charge.status !== "requires_action") {
      pageHeaders(res, challengeCsp(returnUrl));
      return res.redirect(303, returnTo(returnUrl, charge.id));
    }
    return render(req, res, charge, 200);
  }

  router.get("/3ds/:id/return", async (req, res, next) => {
    try {
      await back(req, res, req.query.redirectResult);
    } catch (err) {
      next(err);
    }
  });

  router.post("/3ds/:id/return", express.urlencoded({ extended: false, limit: "16kb" }), async (req, res, next) => {
    try {
      await back(req, res, isRecord(req.body) ? req.body.redirectResult : undefined);
    } catch (err) {
      next(err);
    }
  });

  router.get("/3ds/:id", async (req, res, next) => {
    try {
      const charge = await challengeOf(req, res);
      if (charge) await render(req, res, charge, 200);
    } catch (err) {
      next(err);
    }
  });

  router.post("/3ds/:id", express.urlencoded({ extended: false, limit: "1kb" }), async (req, res, next) => {
    try {
      // page-security.ts: only this server's own page may answer (a form on another site may not).
      const refused = crossSiteRefusal(req, deps.publicUrl(), { requireOrigin: false });
      if (refused) {
        pageHeaders(res, challengeCsp(null));
        return res.status(403).type("text").send(`Refused: ${refused}.`);
      }
      const charge = await challengeOf(req, res);
      if (!charge) return;
      const outcome = isRecord(req.body) ? req.body.outcome : undefined;
      if (outcome !== "complete" && outcome !== "fail") return render(req, res, charge, 400);
      let answered: ChargeDoc;
      try {
        answered = await domain.charges.answerFromPage(charge, outcome === "complete");
      } catch (err) {
        // Answered already (another tab), or expired: show where the charge stands.
        if (!(err instanceof DomainError && err.code === "invalid_state_transition")) throw err;
        return render(req, res, await domain.charges.load(charge.livemode, charge.id), 409);
      }
      const returnUrl = answered.three_d_secure?.return_url ?? null;
      if (returnUrl) {
        pageHeaders(res, challengeCsp(returnUrl));
        return res.redirect(303, returnTo(returnUrl, answered.id));
      }
      return render(req, res, answered, 200);
    } catch (err) {
      next(err);
    }
  });

  return router;
}
