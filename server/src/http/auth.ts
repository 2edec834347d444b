import type { Request } from "express";
import type { Logger } from "pino";
import type { Caller } from "../domain/context.ts";
import { DomainError } from "../domain/errors.ts";
import type { ServiceKeys } from "../domain/service-keys.ts";

// DESIGN §3, §5: express-openapi-validator calls this for every operation with the scopes its
// security requirement lists in the generated document, so the contract is the only scope table.
// A thrown error's `status` becomes the response (401 unknown key, 403 missing scope).

const httpError = (status: 401 | 403, message: string) => Object.assign(new Error(message), { status });

export function grants(keyScopes: readonly string[], required: readonly string[]): boolean {
  return keyScopes.includes("*") || required.some((s) => keyScopes.includes(s));
}

export function serviceKeyAuth(serviceKeys: ServiceKeys, logger: Logger) {
  return async (req: Request, scopes: string[]): Promise<boolean> => {
    // The validator has already checked that a `Bearer` Authorization header is present.
    const secret = (req.headers.authorization ?? "").replace(/^bearer\s+/i, "").trim();
    let key: Awaited<ReturnType<ServiceKeys["authenticate"]>>;
    try {
      key = await serviceKeys.authenticate(secret);
    } catch (err) {
      if (err instanceof DomainError && err.code === "unauthorized") throw httpError(401, err.message);
      throw err;
    }
    const res = req.res;
    if (!res) throw new Error("express request without response");
    const caller: Caller = {
      keyId: key.id,
      livemode: key.livemode,
      scopes: key.scopes,
      keyPrefix: key.prefix,
      requestId: String(res.locals.requestId),
    };
    res.locals.caller = caller;
    if (!grants(key.scopes, scopes)) {
      throw httpError(
        403,
        `This operation needs the scope ${scopes.map((s) => `'${s}'`).join(" or ")}; this key has ${key.scopes.map((s) => `'${s}'`).join(", ")}.`,
      );
    }
    serviceKeys.touch(key).catch((err: unknown) => logger.warn({ err, key_id: key.id }, "could not record key use"));
    return true;
  };
}
