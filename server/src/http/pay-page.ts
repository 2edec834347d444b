import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Request, type Response, Router } from "express";
import type { Domain } from "../domain/index.ts";
import { DomainError } from "../domain/kernel/errors.ts";
import { currencyExponent } from "../domain/kernel/money.ts";
import type { PaymentLinkDoc } from "../domain/payment-links/records.ts";
import type { LinkState } from "../domain/payment-links/state.ts";
import { isRecord } from "../guards.ts";
import { CSP_BASE, escapeHtml, pageHeaders } from "./page-security.ts";
import { payPath } from "./public-operations.ts";

// The hosted payment page (PaymentLink.url in spec/resources/payment-links.tsp): GET /pay/{id} serves a page rendered with the link's data, which
// pays through the public operation payPaymentLink (spec/resources/payment-links.tsp). No key ever
// reaches the browser. The page's sources (HTML templates, CSS, browser JavaScript) live in the
// @payments/pay-page workspace (clients/pay-page) and are read once at start-up; this module fills the
// templates, sends them with a strict Content-Security-Policy (nothing but this server's own scripts,
// styles and images; no inline script or style), and guards the public operation against cross-site use.

/** Nothing from another host, no inline script or style, no form posts. */
export const PAGE_CSP = [
  ...CSP_BASE,
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'none'",
].join("; ");

const ASSET_TYPES: Record<string, string> = {
  "pay.js": "text/javascript; charset=utf-8",
  "validate.js": "text/javascript; charset=utf-8",
  // The QR code library (npm `qr`) the pix result draws with; clients/pay-page/package.json `vendoredAssets`.
  "qr.js": "text/javascript; charset=utf-8",
  "pay.css": "text/css; charset=utf-8",
  "favicon.svg": "image/svg+xml",
};

export interface PageAssets {
  pay: string;
  notice: string;
  files: Map<string, { type: string; body: string }>;
}

/**
 * The page's sources: beside the bundle in the production build (server/build.mjs copies them to
 * dist/pay-page/), else from the @payments/pay-page workspace.
 */
/** The workspace package's `vendoredAssets` (asset name → npm package), its entries that are text. */
function vendoredAssets(pkg: unknown): Record<string, string> {
  const listed = isRecord(pkg) ? pkg.vendoredAssets : undefined;
  if (!isRecord(listed)) return {};
  return Object.fromEntries(
    Object.entries(listed).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
  );
}

export function loadPageAssets(): PageAssets {
  const bundled = fileURLToPath(new URL("./pay-page/", import.meta.url));
  const inBuild = existsSync(join(bundled, "pay.html"));
  const workspace = createRequire(import.meta.url).resolve("@payments/pay-page/package.json");
  const dir = inBuild ? bundled : join(dirname(workspace), "src");
  // Browser libraries the page imports (`vendoredAssets`: asset name → npm package), served from the
  // workspace's node_modules as they are installed, never from a CDN; the production build copies
  // them beside the page's own files.
  const vendored: Record<string, string> = inBuild ? {} : vendoredAssets(JSON.parse(readFileSync(workspace, "utf8")));
  const read = (name: string) => {
    const pkg = vendored[name];
    const path = pkg ? createRequire(workspace).resolve(pkg) : join(dir, name);
    return readFileSync(path, "utf8");
  };
  return {
    pay: read("pay.html"),
    notice: read("notice.html"),
    files: new Map(Object.entries(ASSET_TYPES).map(([name, type]) => [name, { type, body: read(name) }])),
  };
}

/**
 * Fills a template: `<!--if:flag-->…<!--endif:flag-->` is kept only when the flag is true, and each
 * `{{name}}` becomes its value, HTML-escaped. A flag or name the caller did not give is a bug: it throws
 * rather than send a half-filled page.
 */
export function renderTemplate(template: string, values: Record<string, string>, flags: Record<string, boolean>) {
  const section = /<!--if:(\w+)-->([\s\S]*?)<!--endif:\1-->/g;
  let sections = template;
  // Blocks may nest (the method choice holds one block per method): repeat until none is left.
  for (let before = ""; before !== sections; ) {
    before = sections;
    sections = sections.replace(section, (_, flag: string, body: string) => {
      if (!(flag in flags)) throw new Error(`template flag ${flag} not given`);
      return flags[flag] ? body : "";
    });
  }
  return sections.replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`template value ${name} not given`);
    return escapeHtml(value);
  });
}

/** Whether `text` is a decimal numeral (`1234.50`), which Intl.NumberFormat formats as written. */
const isDecimal = (text: string): text is Intl.StringNumericLiteral => /^-?[0-9]+(?:\.[0-9]+)?$/.test(text);

/**
 * An amount in minor units as the payer reads it: `Intl.NumberFormat` with the currency's ISO 4217
 * exponent (JPY 0, USD 2, KWD 3). The decimal is built as a string from the integer, and Intl formats
 * strings exactly, so no float ever rounds a payer's amount.
 */
export function formatAmount(amount: number, currency: string, locale: string): string {
  const exponent = currencyExponent(currency) ?? 2;
  const digits = String(amount).padStart(exponent + 1, "0");
  const decimal = exponent === 0 ? digits : `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
  const format = new Intl.NumberFormat(locale, {
    style: "currency",
    currency,
    minimumFractionDigits: exponent,
    maximumFractionDigits: exponent,
  });
  // Node's Intl (ECMA-402 NumberFormat v3) takes decimal strings, and formats them exactly.
  if (!isDecimal(decimal)) throw new Error(`${amount} is not an amount in minor units`);
  return format.format(decimal);
}

/** The payer's language from Accept-Language when Intl supports it, else English. */
export function localeOf(req: Request): string {
  for (const tag of req.acceptsLanguages()) {
    if (tag === "*") continue;
    try {
      const [supported] = Intl.NumberFormat.supportedLocalesOf([tag]);
      if (supported) return supported;
    } catch {
      // not a language tag
    }
  }
  return "en";
}

/** A page's headers (page-security.ts) with this page's CSP; the answer is HTML. */
function payPageHeaders(res: Response): void {
  pageHeaders(res, PAGE_CSP);
  res.type("html");
}

const NOTICES: Record<Exclude<LinkState, "open"> | "not_found", { title: string; message: (m: string) => string }> = {
  not_found: {
    title: "Payment link not found",
    message: () => "This payment link does not exist. Check the address, or ask the seller for a new link.",
  },
  inactive: {
    title: "This payment link is not active",
    message: (m) => `${m} is not taking payments through this link right now. Contact them for another way to pay.`,
  },
  expired: {
    title: "This payment link has expired",
    message: (m) => `It no longer takes payments. Ask ${m} for a new link if you still need to pay.`,
  },
  used_up: {
    title: "This payment link has already been used",
    message: (m) => `It has taken all the payments it allows. Ask ${m} for a new link if you still need to pay.`,
  },
};

const METHODS = ["card", "pix", "boleto", "oxxo", "spei", "sepa_debit"] as const;

/** What the payer reads on coming back from the issuer's 3-D Secure challenge, by the charge's status. */
function returnOutcome(status: string, amount: string, merchant: string, failure: string | null) {
  switch (status) {
    case "captured":
      return { title: "Payment received", message: `You paid ${amount} to ${merchant}.` };
    case "authorized":
      return { title: "Payment accepted", message: `Your payment of ${amount} to ${merchant} was accepted.` };
    case "declined":
      return {
        title: "Payment declined",
        message: `${failure ?? "The payment was declined."} Nothing was charged; you can pay again from the link.`,
      };
    case "expired":
      return {
        title: "Payment not completed",
        message: "Your bank's check was not answered in time. Nothing was charged.",
      };
    default:
      return { title: "Payment not confirmed yet", message: "Your bank has not confirmed this payment yet." };
  }
}

/** A notice page (a link not found, or not taking payments) in the payer's language. */
function notice(
  assets: PageAssets,
  locale: string,
  state: keyof typeof NOTICES,
  link: PaymentLinkDoc | null,
  merchantName: string,
): string {
  const { title, message } = NOTICES[state];
  return renderTemplate(
    assets.notice,
    {
      lang: locale,
      state,
      title,
      message: message(merchantName || "the seller"),
      merchant: merchantName,
      description: link?.description ?? "",
      amount: link ? formatAmount(link.amount, link.currency, locale) : "",
    },
    { link: link !== null },
  );
}

/**
 * The answer for a link that does not exist: also what a sandbox's page path with an unknown or deleted
 * sandbox id answers (sandbox-pages.ts), so the two cannot be told apart.
 */
export function linkNotFound(req: Request, res: Response, assets: PageAssets): void {
  payPageHeaders(res);
  res.status(404).send(notice(assets, localeOf(req), "not_found", null, ""));
}

/**
 * GET /pay/{id} and its assets. Mounted before the contract's validator: these are pages, not API operations.
 * `pathPrefix`: where this app's pages and public payment are reached, before their own path: nothing for
 * the account's, `/sandboxes/{id}` for a sandbox on demand's (sandbox-pages.ts); the page pays there.
 */
export function payPages(deps: { domain: Domain; assets?: PageAssets; pathPrefix?: string }): Router {
  const assets = deps.assets ?? loadPageAssets();
  const router = Router();

  router.get("/pay/assets/:file", (req, res, next) => {
    const file = assets.files.get(String(req.params.file));
    if (!file) return next();
    res.type(file.type).send(file.body);
  });

  router.get("/pay/:id", async (req, res, next) => {
    const locale = localeOf(req);
    let view: Awaited<ReturnType<Domain["paymentLinks"]["page"]>>;
    try {
      view = await deps.domain.paymentLinks.page(String(req.params.id));
    } catch (err) {
      if (!(err instanceof DomainError && err.code === "not_found")) return next(err);
      return linkNotFound(req, res, assets);
    }
    const { link, merchantName, state, pageToken } = view;
    payPageHeaders(res);
    if (state !== "open" || pageToken === null) {
      return res.status(410).send(notice(assets, locale, state === "open" ? "inactive" : state, link, merchantName));
    }
    const offered = new Set<string>(link.payment_methods);
    const first = METHODS.find((m) => offered.has(m));
    const values: Record<string, string> = {
      lang: locale,
      merchant: merchantName,
      description: link.description,
      amount: formatAmount(link.amount, link.currency, locale),
      page_token: pageToken,
      pay_path: `${deps.pathPrefix ?? ""}${payPath.of(link.id)}`,
    };
    const flags: Record<string, boolean> = { test: !link.livemode, choice: offered.size > 1 };
    for (const method of METHODS) {
      flags[method] = offered.has(method);
      values[`checked_${method}`] = method === first ? "checked" : "";
      values[`hidden_${method}`] = method === first ? "" : "hidden";
    }
    res.status(200).send(renderTemplate(assets.pay, values, flags));
  });

  // Where the issuer's 3-D Secure challenge sends the payer back (the link's charge's return_url,
  // domain/payment-links/pay.ts): the outcome of that charge, on the link's page. Only a charge made
  // through this link is shown, and only its outcome (no card details beyond what the payer typed).
  router.get("/pay/:id/return", async (req, res, next) => {
    try {
      const locale = localeOf(req);
      const view = await deps.domain.paymentLinks.page(String(req.params.id)).catch((err: unknown) => {
        if (err instanceof DomainError && err.code === "not_found") return null;
        throw err;
      });
      const txId = String(req.query.tx_id ?? "");
      const charge = view
        ? await deps.domain.charges.load(view.link.livemode, txId).catch((err: unknown) => {
            if (err instanceof DomainError && err.code === "not_found") return null;
            throw err;
          })
        : null;
      if (!view || !charge || charge.payment_link_id !== view.link.id) return linkNotFound(req, res, assets);
      payPageHeaders(res);
      const amount = formatAmount(view.link.amount, view.link.currency, locale);
      const { title, message } = returnOutcome(charge.status, amount, view.merchantName, charge.failure_message);
      res.status(200).send(
        renderTemplate(
          assets.notice,
          {
            lang: locale,
            state: charge.status,
            title,
            message: `${message} Reference: ${charge.id}.`,
            merchant: view.merchantName,
            description: view.link.description,
            amount,
          },
          { link: true },
        ),
      );
    } catch (err) {
      next(err);
    }
  });

  return router;
}
