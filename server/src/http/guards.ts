import type { NextFunction, Request, Response } from "express";
import { DomainError, type FieldIssue } from "../domain/kernel/errors.ts";
import { displayUrl } from "../domain/kernel/mask.ts";
import type { FieldErrorCode } from "./validator-errors.ts";

// Small per-request guards that the contract implies but express-openapi-validator does not enforce.

/**
 * Headers on every answer: nothing the API says is cached by a browser or proxy (answers can carry a
 * secret or a card number), and no browser guesses a content type other than the one sent.
 */
export function securityHeaders() {
  return (_req: Request, res: Response, next: NextFunction) => {
    res.setHeader("Cache-Control", "no-store");
    res.setHeader("X-Content-Type-Options", "nosniff");
    next();
  };
}

/**
 * The contract's paths are matched exactly (spec/main.tsp "Paths"): `/v1/merchants/` is not
 * `/v1/merchants`, so it is a 404 that says which path was probably meant, rather than the list the
 * validator's lenient matching would answer (a client relying on that would meet a mock, or another
 * server, that does not). Mounted after the pages (`/`, `/docs/`, `/console/`), which are not the contract's.
 */
export function exactPaths() {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (req.path === "/" || !req.path.endsWith("/")) return next();
    const meant = req.path.replace(/\/+$/, "");
    next(
      new DomainError(
        "not_found",
        `No route ${req.method} ${displayUrl(req.path, 200)}: paths have no trailing slash (did you mean ${displayUrl(meant, 200)}?).`,
      ),
    );
  };
}

/**
 * For operations the contract gives no request body: none is taken, and `{}` counts as none, for
 * clients that send a JSON object with every POST (spec/main.tsp "Request bodies"; docs/api.md
 * "Conventions"). Anything else sent is a 400 naming `body`. `{}` is dropped here, so a retry without a
 * body is the same request for its Idempotency-Key.
 */
export function noBody() {
  return (req: Request, _res: Response, next: NextFunction) => {
    const length = Number(req.headers["content-length"] ?? 0);
    if (req.headers["transfer-encoding"] === undefined && length === 0) return next();
    // express.json (app.ts) has parsed a JSON body by now; any other body stays unread (undefined).
    const body: unknown = req.body;
    if (typeof body === "object" && body !== null && !Array.isArray(body) && Object.keys(body).length === 0) {
      req.body = undefined;
      return next();
    }
    const issues: (FieldIssue & { code: FieldErrorCode })[] = [
      {
        param: "body",
        code: "body_not_allowed",
        message: "must be empty (or `{}`): this operation takes no request body",
      },
    ];
    return next(
      new DomainError("invalid_request", "This operation takes no request body: send none, or `{}`.", {
        param: "body",
        errors: issues,
      }),
    );
  };
}

/**
 * Integer query parameters must be written as plain decimal numbers: the validator converts query
 * strings with Number(), which would take `limit=0x10` as 16, `1e1` as 10 and `5.0` as 5.
 */
export function strictIntegers(names: readonly string[]) {
  const DECIMAL = /^-?(0|[1-9][0-9]*)$/;
  return (req: Request, _res: Response, next: NextFunction) => {
    const query = new URLSearchParams(req.originalUrl.split("?")[1] ?? "");
    for (const name of names) {
      for (const value of query.getAll(name)) {
        if (!DECIMAL.test(value)) {
          const message = "must be a whole number written in decimal digits, such as `20`";
          const issues: (FieldIssue & { code: FieldErrorCode })[] = [{ param: name, code: "invalid_type", message }];
          return next(new DomainError("invalid_request", `\`${name}\` ${message}.`, { param: name, errors: issues }));
        }
      }
    }
    next();
  };
}
