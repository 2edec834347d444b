import type { Request, Response } from "express";

// The security rules of every page this server serves and of every request a page of ours may send (the
// console at /console, the API reference at /docs, the hosted payment page at /pay/{id}), each written
// once: the headers a page is sent with, HTML escaping, and the cross-site check.

/** The CSP directives every page starts from: nothing allowed unless a page adds it; no framing, no <base>. */
export const CSP_BASE = ["default-src 'none'", "base-uri 'none'", "frame-ancestors 'none'"] as const;

/**
 * The headers of every HTML page, beside its own Content-Security-Policy: no framing, no referrer
 * leaving with a link's URL (a payment link's page token, a console path), a browsing-context group and
 * resources of its own, and none of the powerful features a page of ours never uses.
 */
export function pageHeaders(res: Response, csp: string): void {
  res.setHeader("Content-Security-Policy", csp);
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("Referrer-Policy", "no-referrer");
  res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
  res.setHeader("Cross-Origin-Resource-Policy", "same-origin");
  res.setHeader("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()");
}

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text as HTML text or attribute value: the five characters that could end either are escaped. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch] ?? ch);
}

const SAFE_METHODS = new Set(["GET", "HEAD"]);

/**
 * Why a request may not act for one of this server's pages, or null when it may: it must come from the
 * server's own origin. A browser says where a request comes from: `Sec-Fetch-Site` (when it sends it)
 * must be `same-origin`, and an `Origin` must be this server's (its public BASE_URL origin, or the
 * origin the request was addressed to). `requireOrigin`: a request that can change something (any
 * method but GET/HEAD) must carry an `Origin` at all. The console requires it (a session cookie rides
 * along with any request a browser sends); the public pay operation does not, since requests without
 * one come from no browser (curl, a server) and still need the page token only the page carries.
 */
export function crossSiteRefusal(req: Request, publicUrl: string, options: { requireOrigin: boolean }): string | null {
  const site = req.get("sec-fetch-site");
  if (site !== undefined && site !== "same-origin") return `Sec-Fetch-Site is ${site}, not same-origin`;
  const origin = req.get("origin");
  if (origin === undefined) {
    return options.requireOrigin && !SAFE_METHODS.has(req.method)
      ? "no Origin header on a request that can change something"
      : null;
  }
  const host = req.get("host");
  if (origin === new URL(publicUrl).origin || (host !== undefined && origin === `${req.protocol}://${host}`))
    return null;
  return `Origin ${origin} is not this server's`;
}
