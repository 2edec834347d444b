import type { NextFunction, Request, RequestHandler, Response } from "express";
import { type ConsoleSessions, isWellFormedToken } from "../domain/console-sessions/console-sessions.ts";
import { DomainError } from "../domain/kernel/errors.ts";
import { KEY_TAG_LENGTH } from "../domain/sandboxes/sandboxes.ts";
import type { ServiceKeyDoc } from "../domain/service-keys/records.ts";
import { isWellFormedSecret, type ServiceKeys } from "../domain/service-keys/service-keys.ts";
import { isRecord } from "../guards.ts";
import { bearerSecret } from "../http/auth.ts";
import { CONSOLE_API_PREFIX, readCookie, SESSION_PATH } from "../http/console.ts";
import { jsonBody } from "../http/front.ts";

// Which credential routes a request to a sandbox on demand (./host.ts router), and how a sandbox tells
// that the credential is its own. An API request carries a service key (`Authorization: Bearer`); the
// developer console's requests carry none (docs/console.md "The console"): its sign-in
// (`POST /console/session {"key": …}`) carries the key in its body, and every later request
// (`/console/session`, `/console/api/v1/...`) the session cookie. A sandbox's key secrets and its
// sessions' tokens both end with the sandbox's tag (domain/sandboxes KEY_TAG_LENGTH), so all three are
// routed the same way: by that tag, to the sandbox whose own store keeps the key and the session. A
// console session opened with a sandbox's key therefore lives and acts inside that sandbox, and ends
// with it (deleting the sandbox erases its store, sessions included).

/** A credential that may belong to a sandbox on demand: a key's secret, or a console session's token. */
export type Credential = { kind: "key"; secret: string } | { kind: "session"; token: string };

/** The tag a credential ends with (domain/sandboxes): which sandbox it would belong to. */
export const tagOf = (credential: Credential) =>
  (credential.kind === "key" ? credential.secret : credential.token).slice(-KEY_TAG_LENGTH);

/** Runs Express handlers in order on a request, outside an app: resolves when the last calls next. */
function runAll(handlers: RequestHandler[], req: Request, res: Response): Promise<void> {
  return handlers.reduce<Promise<void>>(
    (before, handler) =>
      before.then(
        () =>
          new Promise<void>((resolve, reject) => {
            const next: NextFunction = (err?: unknown) => (err ? reject(err) : resolve());
            void handler(req, res, next);
          }),
      ),
    Promise.resolve(),
  );
}

/**
 * The credential a request would be routed by, or undefined when it carries none a sandbox could own:
 * only `key_test_` secrets (a sandbox's keys are sandbox keys) and well-formed session tokens are. The
 * console's sign-in body is read here (with the app's own JSON limits: a body read here is not read
 * again), since the key in it decides which app serves the request; a body that is not JSON is left
 * to the account's app, which refuses it as today. A body that cannot be parsed rejects, with the
 * parser's error (a 400 problem).
 */
export function credentialOf(options: {
  /** The console's session cookie's name (http/console.ts consoleCookie). */
  cookieName: string;
  bodyLimitBytes: number;
  /** CONSOLE_ENABLED: without the console, only Bearer keys route. */
  console: boolean;
}): (req: Request, res: Response) => Promise<Credential | undefined> {
  const parse = jsonBody(options.bodyLimitBytes);
  const sandboxKey = (secret: unknown): Credential | undefined =>
    typeof secret === "string" && secret.startsWith("key_test_") && isWellFormedSecret(secret)
      ? { kind: "key", secret }
      : undefined;

  return async (req, res) => {
    const header = req.headers.authorization;
    if (header !== undefined) return sandboxKey(bearerSecret(header));
    if (!options.console) return undefined;
    if (req.path === SESSION_PATH && req.method === "POST") {
      if (!req.is("application/json")) return undefined;
      await runAll(parse, req, res);
      return sandboxKey(isRecord(req.body) ? req.body.key : undefined);
    }
    if (req.path === SESSION_PATH || req.path.startsWith(`${CONSOLE_API_PREFIX}/`)) {
      const token = readCookie(req, options.cookieName);
      return token !== undefined && isWellFormedToken(token) ? { kind: "session", token } : undefined;
    }
    return undefined;
  };
}

/**
 * Whether a sandbox's domain owns the credential: a live key of it (`key`: its record, so that the router
 * records its use in the sandbox), or a console session its store holds. A key of the default sandbox (or
 * its session) whose last characters happen to be a sandbox's tag is not that sandbox's. Any other failure
 * than "unauthorized" is thrown.
 */
export async function ownedBy(
  domain: { serviceKeys: Pick<ServiceKeys, "authenticate">; consoleSessions: Pick<ConsoleSessions, "holds"> },
  credential: Credential,
): Promise<{ owned: boolean; key?: ServiceKeyDoc }> {
  if (credential.kind === "session") return { owned: await domain.consoleSessions.holds(credential.token) };
  try {
    return { owned: true, key: await domain.serviceKeys.authenticate(credential.secret) };
  } catch (err) {
    if (err instanceof DomainError && err.code === "unauthorized") return { owned: false };
    throw err;
  }
}
