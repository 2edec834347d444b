import type { NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import {
  type ConsoleSessions,
  csrfTokenFor,
  type SessionSandbox,
} from "../domain/console-sessions/console-sessions.ts";
import type { Caller } from "../domain/kernel/caller.ts";
import { DomainError } from "../domain/kernel/errors.ts";
import type { ServiceKeyDoc } from "../domain/service-keys/records.ts";
import { isRecord } from "../guards.ts";
import { sendProblem } from "./errors.ts";
import { locals } from "./locals.ts";
import { crossSiteRefusal } from "./page-security.ts";
import { problem } from "./problems.ts";

// The developer console's way into the API (docs/console.md "Console and API reference").
//
// The console is a client of the public API: its pages call the same /v1 operations as any
// integration, through `/console/api/v1/...`. A request there carries the session cookie and a CSRF
// token instead of `Authorization: Bearer`; `consoleApi` checks both, builds the same Caller the Bearer
// path builds from the session's key, and rewrites the URL to `/v1/...`. From then on the request is an
// API request like any other: the same rate limit per key, validation, scope check (from the
// contract), idempotency, handlers and request log (marked `source: console`). There is no second
// business logic.
//
// Cross-site request forgery, three layers, because each alone has a gap:
// 1. The cookie is `SameSite=Strict`: browsers do not attach it to requests started by another site.
//    But "site" is the registrable domain, so a page on a sibling subdomain (or one an attacker took
//    over) is same-site and would still get it sent.
// 2. The request's origin: `Sec-Fetch-Site`, when the browser sends it, must be `same-origin`, and
//    every request that can change something (any method but GET/HEAD) must carry an `Origin` equal
//    to this server's (BASE_URL, or the origin the request was addressed to). This closes the sibling
//    gap, in browsers that send these headers.
// 3. A CSRF token in the `X-CSRF-Token` header, on every /console/api request and on sign-out. An HTML
//    form cannot set a header, and another origin cannot read the token (it is derived from the
//    HttpOnly session token and handed out only in same-origin answers), so a forged request lacks it
//    even in a browser that sends no Fetch Metadata.
// Sign-in itself (no session yet, so no token) is protected by the origin check and by accepting JSON
// only, which a cross-origin page cannot send without a CORS preflight this server never grants.

export const CONSOLE_API_PREFIX = "/console/api";
export const SESSION_PATH = "/console/session";
export const CSRF_HEADER = "X-CSRF-Token";

export interface ConsoleCookie {
  /** `__Host-payments_console` when Secure (the prefix makes browsers refuse it from any other path or host), else `payments_console`. */
  name: string;
  /** Secure everywhere but on a loopback BASE_URL over http (a developer's own machine). */
  secure: boolean;
  maxAgeSeconds: number;
}

/** The cookie settings for a public address: Secure unless it is http on a loopback host. */
export function consoleCookie(baseUrl: string, ttlSeconds: number): ConsoleCookie {
  const url = new URL(baseUrl);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const loopback = host === "localhost" || host.endsWith(".localhost") || /^127\./.test(host) || host === "::1";
  const secure = !(url.protocol === "http:" && loopback);
  return { name: secure ? "__Host-payments_console" : "payments_console", secure, maxAgeSeconds: ttlSeconds };
}

function setCookie(res: Response, cookie: ConsoleCookie, value: string, maxAge: number): void {
  const parts = [`${cookie.name}=${value}`, "Path=/", "HttpOnly", "SameSite=Strict", `Max-Age=${maxAge}`];
  if (cookie.secure) parts.push("Secure");
  res.append("Set-Cookie", parts.join("; "));
}

/** A cookie's value from the request, or undefined (also read by the sandboxes' router: sandboxes/console-routing.ts). */
export function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The API's view of a key, as the Bearer path builds it (./auth.ts). */
function callerOf(key: ServiceKeyDoc, requestId: string): Caller {
  return { keyId: key.id, livemode: key.livemode, scopes: key.scopes, keyPrefix: key.prefix, requestId };
}

/**
 * What the console learns about its session: who it acts as, in which sandbox on demand (null: the
 * account's production or default sandbox, which `key.livemode` tells apart), until when, and its CSRF token.
 */
function sessionBody(key: ServiceKeyDoc, expiresAt: string, csrfToken: string, sandbox: SessionSandbox | null) {
  return {
    object: "console_session",
    sandbox,
    key: {
      id: key.id,
      name: key.name,
      prefix: key.prefix,
      scopes: key.scopes,
      livemode: key.livemode,
      expires_at: key.expires_at,
    },
    expires_at: expiresAt,
    csrf_token: csrfToken,
  };
}

export interface ConsoleHttpDeps {
  sessions: ConsoleSessions;
  cookie: ConsoleCookie;
  logger: Logger;
}

const publicUrlOf = (res: Response) => String(res.app.locals.publicUrl);

function refuse(res: Response, code: "unauthorized" | "forbidden", detail: string): void {
  sendProblem(res, problem(code, detail, { requestId: String(locals(res).requestId ?? "") }));
}

interface Refusal {
  code: "unauthorized" | "forbidden";
  detail: string;
}

/**
 * Answers a console API request that `consoleApi` refused. It runs after the rate limiters, so refused
 * requests count against their address like any request without a valid key.
 */
export function consoleRefusals() {
  return (_req: Request, res: Response, next: NextFunction) => {
    const refusal = locals(res).consoleRefusal;
    if (refusal) return refuse(res, refusal.code, refusal.detail);
    next();
  };
}

const SESSION_ENDED =
  "No console session, or it has ended (signed out, expired, or its key was revoked, expired or rotated). Sign in again.";

/**
 * `/console/api/v1/...`: checks the request's origin and CSRF token, resolves the session to its key,
 * sets the caller exactly as Bearer authentication would, and hands the request on as `/v1/...`.
 * Runs before authentication, rate limits and validation.
 */
export function consoleApi(deps: ConsoleHttpDeps) {
  const { sessions, cookie } = deps;
  return async (req: Request, res: Response, next: NextFunction) => {
    if (!req.path.startsWith(`${CONSOLE_API_PREFIX}/`)) return next();
    const apiUrl = req.url.slice(CONSOLE_API_PREFIX.length);
    if (!apiUrl.startsWith("/v1/")) return next();
    locals(res).console = true;
    // The request now reads as the API request it stands for: the validator, the idempotency record
    // (its request hash), the routes and the request log all see `/v1/...`.
    req.url = apiUrl;
    req.originalUrl = apiUrl;

    // A refusal is answered after the rate limiters (consoleRefusals), so it counts per address.
    const refused = (why: string, refusal: Refusal) => {
      locals(res).authFailure = `console: ${why}`;
      locals(res).consoleRefusal = refusal;
      next();
    };
    const crossSite = crossSiteRefusal(req, publicUrlOf(res), { requireOrigin: true });
    if (crossSite) {
      return refused(crossSite, {
        code: "forbidden",
        detail: "Cross-site request refused: the console's API accepts requests from its own pages only.",
      });
    }
    const token = readCookie(req, cookie.name);
    if (!token) return refused("no session cookie", { code: "unauthorized", detail: SESSION_ENDED });
    if (req.get(CSRF_HEADER) !== csrfTokenFor(token)) {
      return refused("missing or wrong CSRF token", {
        code: "forbidden",
        detail: `Missing or wrong ${CSRF_HEADER}: reload the console.`,
      });
    }
    try {
      const resolved = await sessions.resolve(token);
      if ("refused" in resolved) return refused(resolved.refused, { code: "unauthorized", detail: SESSION_ENDED });
      locals(res).caller = callerOf(resolved.key, String(locals(res).requestId));
      locals(res).serviceKey = resolved.key;
      // For a request that lasts (an event stream): whether the session still resolves (not signed
      // out, expired, or its key revoked, expired or rotated), as the next request would be asked.
      locals(res).stillAuthorized = async () => !("refused" in (await sessions.resolve(token)));
      // express-openapi-validator refuses a bearer-secured operation before calling the scope check
      // when no Authorization header is present; this marker satisfies that presence test. It is
      // never read as a key: authentication skips console requests, whose caller is set above.
      req.headers.authorization = "Bearer console-session";
      next();
    } catch (err) {
      next(err);
    }
  };
}

/**
 * Sign-in (`POST /console/session {"key": "<secret>"}`), the current session (`GET`: 200 with it, or
 * 204 when there is none) and sign-out (`DELETE`). Not API operations (the contract describes what integrations call; these exist for the
 * console page alone), so they sit outside the validator; they answer in the API's JSON and problems.
 */
export function sessionRoutes(deps: ConsoleHttpDeps) {
  const { sessions, cookie, logger } = deps;
  return async (req: Request, res: Response, next: NextFunction) => {
    if (req.path !== SESSION_PATH) return next();
    try {
      const crossSite = crossSiteRefusal(req, publicUrlOf(res), { requireOrigin: true });
      if (crossSite) {
        locals(res).authFailure = `console: ${crossSite}`;
        return refuse(res, "forbidden", "Cross-site request refused: sign in from the console's own page.");
      }
      const token = readCookie(req, cookie.name);

      if (req.method === "POST") {
        if (!req.is("application/json")) {
          throw new DomainError("unsupported_media_type", 'Send the key as JSON: {"key": "key_test_…"}.');
        }
        const secret = isRecord(req.body) ? req.body.key : undefined;
        if (typeof secret !== "string" || secret.length === 0) {
          throw new DomainError("invalid_request", "key: a service key secret is required", {
            param: "key",
            errors: [{ param: "key", message: "a service key secret is required" }],
          });
        }
        // A new sign-in replaces the session this browser had.
        if (token) await sessions.signOut(token);
        let signedIn: Awaited<ReturnType<ConsoleSessions["signIn"]>>;
        try {
          signedIn = await sessions.signIn(secret);
        } catch (err) {
          if (err instanceof DomainError && err.code === "unauthorized")
            locals(res).authFailure = `console sign-in: ${err.message}`;
          throw err;
        }
        const { key, session } = signedIn;
        // The cookie lives as long as the session (shorter than the setting when the key expires first).
        setCookie(res, cookie, signedIn.token, Math.min(signedIn.lifetimeSeconds, cookie.maxAgeSeconds));
        // The key's prefix, never its secret, in the log; the caller is set so the request log keeps it.
        locals(res).caller = callerOf(key, String(locals(res).requestId));
        locals(res).console = true;
        logger.info({ key_id: key.id, key_prefix: key.prefix, request_id: locals(res).requestId }, "console sign-in");
        return res.status(200).json(sessionBody(key, session.expires_at, signedIn.csrfToken, sessions.sandbox));
      }

      if (req.method === "GET") {
        // No session is an answer, not a failure: 204, so the sign-in page loads without an error.
        const resolved = token ? await sessions.resolve(token) : { refused: "no session cookie" };
        if (!token || "refused" in resolved) return res.status(204).end();
        return res
          .status(200)
          .json(sessionBody(resolved.key, resolved.session.expires_at, csrfTokenFor(token), sessions.sandbox));
      }

      if (req.method === "DELETE") {
        if (token) {
          if (req.get(CSRF_HEADER) !== csrfTokenFor(token)) {
            return refuse(res, "forbidden", `Missing or wrong ${CSRF_HEADER}: reload the console.`);
          }
          await sessions.signOut(token);
        }
        setCookie(res, cookie, "", 0);
        return res.status(204).end();
      }

      res.setHeader("Allow", "GET, POST, DELETE");
      throw new DomainError("method_not_allowed", `${req.method} is not allowed on ${SESSION_PATH}.`);
    } catch (err) {
      next(err);
    }
  };
}
