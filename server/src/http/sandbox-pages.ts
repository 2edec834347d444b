import type { Request, RequestHandler } from "express";
import { notFound } from "../domain/kernel/errors.ts";
import { linkNotFound, type PageAssets } from "./pay-page.ts";
import { payPath } from "./public-operations.ts";
import { challengeNotFound } from "./three-d-secure-page.ts";

// The keyless pages of a sandbox on demand's objects (spec/resources/sandboxes.tsp; docs/testing-your-
// integration.md "Sandboxes on demand"). A payer's browser carries no key, so nothing in a page request
// says which sandbox a payment link or a 3-D Secure challenge belongs to: its path does. A sandbox's pages
// live under `/sandboxes/{sbx_id}` (PaymentLink.url, NextAction.url and return_url of its objects carry
// it: the sandbox's domain is given that base address, sandboxes/host.ts), and this front hands each to
// the sandbox's own app without the prefix, where the pages' own routes (pay-page.ts,
// three-d-secure-page.ts) and their security headers (page-security.ts) serve it as they serve the
// account's. Only the keyless surfaces are reached this way: the hosted payment page and its return,
// the challenge page and its return, and the public payment the hosted page makes (payPaymentLink);
// every other path under the prefix is no route. An unknown or deleted sandbox answers exactly what an
// unknown link or challenge answers (status, body and headers), so a path says nothing about whether a
// sandbox exists.

/** The path a sandbox's pages are reached under, before the page's own path. */
export const sandboxPathPrefix = (sandboxId: string) => `/sandboxes/${sandboxId}`;

/** Group 1: what stands where a sandbox id should; group 2: the page's own path. */
const UNDER_A_SANDBOX = /^\/sandboxes\/([^/]+)(\/.*)$/;
/** SandboxId in spec/resources/sandboxes.tsp. */
const SANDBOX_ID = /^sbx_[0-9A-Za-z]{24}$/;

type Surface = "pay_page" | "challenge" | "payment";

/** Which keyless surface a page's own path and method are, or null for any other request. */
function surfaceOf(method: string, path: string): Surface | null {
  const reads = method === "GET" || method === "HEAD";
  if (reads && /^\/pay\/[^/]+(\/return)?$/.test(path)) return "pay_page";
  if ((reads || method === "POST") && /^\/3ds\/[^/]+(\/return)?$/.test(path)) return "challenge";
  if (method === "POST" && payPath.linkOf(path) !== null) return "payment";
  return null;
}

/** A request for a page of a sandbox's objects: the sandbox id in its path, the page's own path, which page. */
function pageRequest(req: Request): { sandboxId: string; ownPath: string; surface: Surface } | null {
  const match = UNDER_A_SANDBOX.exec(req.path);
  if (!match) return null;
  const [, sandboxId = "", ownPath = ""] = match;
  const surface = surfaceOf(req.method, ownPath);
  return surface === null ? null : { sandboxId, ownPath, surface };
}

/**
 * The front of the account's app for `/sandboxes/{sbx_id}/…`: `serve` gives the handler of the sandbox's
 * app (opening it if needed), or null when no sandbox has that id; then the request goes on into the
 * account's app, whose `unknownSandboxPages` answers it after the headers and logging every answer gets.
 */
export function sandboxPages(serve: (sandboxId: string) => Promise<RequestHandler | null>): RequestHandler {
  return async (req, res, next) => {
    const page = pageRequest(req);
    if (page === null || !SANDBOX_ID.test(page.sandboxId)) return next();
    try {
      const app = await serve(page.sandboxId);
      if (app === null) return next();
      // The request now reads as the page's own (as the console's API requests read as /v1/…: console.ts),
      // for the routes, the validator and the request log; the pages add the prefix back to the links
      // they write (pathPrefix in app.ts).
      const url = req.url.slice(sandboxPathPrefix(page.sandboxId).length);
      req.url = url;
      req.originalUrl = url;
      app(req, res, next);
    } catch (err) {
      next(err);
    }
  };
}

/**
 * In the account's app, beside its own pages: a page of a sandbox that the front did not hand over (no
 * sandbox has that id, or it was deleted) answers what an unknown link or challenge answers.
 */
export function unknownSandboxPages(assets: PageAssets): RequestHandler {
  return (req, res, next) => {
    const page = pageRequest(req);
    if (page === null) return next();
    if (page.surface === "pay_page") return linkNotFound(req, res, assets);
    if (page.surface === "challenge") return challengeNotFound(res);
    // The public payment's 404 problem, as a sandbox's own app gives it for a link it does not have.
    next(notFound("payment link", decodeURIComponent(payPath.linkOf(page.ownPath) ?? "")));
  };
}
