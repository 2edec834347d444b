import type { NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import type { Caller } from "../domain/kernel/caller.ts";
import { DomainError } from "../domain/kernel/errors.ts";
import type { ServiceKeys } from "../domain/service-keys/service-keys.ts";
import { locals } from "./locals.ts";

// Service keys (spec/common/auth.tsp). Authentication runs first, before rate limits and validation, so
// every later step knows the caller: `authenticate` turns `Authorization: Bearer <secret>` into
// `locals(res).caller`, or notes why it could not. The scope check is express-openapi-validator's security
// handler, called with the scopes each operation's security requirement lists in the generated
// document, so the contract is the only scope table. A thrown error's `status` becomes the response.

/**
 * The one 401 detail. Whether a key was malformed, unknown, expired or revoked is told only to the
 * server's log (the request line's `auth_failure`), never to the caller: the answer must not help
 * anyone probe which keys exist.
 */
export const UNAUTHORIZED_DETAIL =
  "A valid service key is required: send Authorization: Bearer <key>. The key given is missing, malformed, unknown, expired or revoked.";

const httpError = (status: 401 | 403, message: string) => Object.assign(new Error(message), { status });

export function grants(keyScopes: readonly string[], required: readonly string[]): boolean {
  return keyScopes.includes("*") || required.some((s) => keyScopes.includes(s));
}

/** The secret of an `Authorization: Bearer <secret>` header, or undefined for any other credential. */
export const bearerSecret = (header: string): string | undefined => /^bearer\s+(\S+)\s*$/i.exec(header)?.[1];

/** What authentication needs of a key: the service keys' own (the mock's front has a stateless stand-in). */
export type KeyAuthenticator = Pick<ServiceKeys, "authenticate">;

/** Identifies the caller from the Authorization header, when there is one. Never answers by itself. */
export function authenticate(serviceKeys: KeyAuthenticator) {
  return async (req: Request, res: Response, next: NextFunction) => {
    // The console's requests already have their caller, from the session (./console.ts).
    if (locals(res).console) return next();
    const header = req.headers.authorization;
    if (header === undefined) return next();
    const secret = bearerSecret(header);
    if (secret === undefined) {
      locals(res).authFailure = "not a Bearer credential";
      return next();
    }
    try {
      const key = await serviceKeys.authenticate(secret);
      const caller: Caller = {
        keyId: key.id,
        livemode: key.livemode,
        scopes: key.scopes,
        keyPrefix: key.prefix,
        requestId: String(locals(res).requestId),
      };
      locals(res).caller = caller;
      locals(res).serviceKey = key;
      // For a request that lasts (an event stream, event-stream.ts): whether this secret still
      // authenticates, by the same rules, as the next request with it would be asked.
      locals(res).stillAuthorized = () =>
        serviceKeys.authenticate(secret).then(
          () => true,
          (err: unknown) => {
            if (err instanceof DomainError && err.code === "unauthorized") return false;
            throw err;
          },
        );
      next();
    } catch (err) {
      if (err instanceof DomainError && err.code === "unauthorized") {
        locals(res).authFailure = err.message;
        return next();
      }
      next(err);
    }
  };
}

/** The validator's security handler: 401 without an authenticated caller, 403 without the scope. */
export function scopeCheck(serviceKeys: Pick<ServiceKeys, "touch">, logger: Logger) {
  return async (req: Request, scopes: string[]): Promise<boolean> => {
    const res = req.res;
    if (!res) throw new Error("express request without response");
    const caller = locals(res).caller;
    if (!caller) throw httpError(401, UNAUTHORIZED_DETAIL);
    if (!grants(caller.scopes, scopes)) {
      throw httpError(
        403,
        `This operation needs the scope ${scopes.map((s) => `'${s}'`).join(" or ")}; this key has ${caller.scopes.map((s) => `'${s}'`).join(", ")}.`,
      );
    }
    const key = locals(res).serviceKey;
    if (key === undefined) throw new Error("a caller without its service key: auth.ts sets both");
    serviceKeys.touch(key).catch((err: unknown) => logger.warn({ err, key_id: key.id }, "could not record key use"));
    return true;
  };
}
