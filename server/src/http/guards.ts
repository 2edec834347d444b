import type { NextFunction, Request, Response } from "express";
import { DomainError, type FieldIssue } from "../domain/kernel/errors.ts";
import { refuseCardNumbersInText } from "../domain/kernel/free-text.ts";
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
 * An empty request body reads as `{}`, however the client framed its emptiness (spec/main.tsp "Request
 * bodies"). express.json already parses a zero-length body as `{}`; a request with neither
 * Content-Length nor a chunked body (what `curl -X POST -H 'Content-Type: application/json'` sends
 * without `-d`) leaves `req.body` undefined, which the validator reported as "`body` must have required
 * property 'body'" and, where every field is optional (a capture, a refund), let through to a handler
 * that read a field of nothing: a 500. So an operation whose fields are all optional (capture the whole
 * amount, rotate a key) runs as it would with `{}`, and one with required fields names them, whether or
 * not the empty request said `Content-Type: application/json`. Runs before
 * the validator, for the methods that carry a body; noBody below drops it again for operations that
 * take none.
 */
export function emptyBodyAsObject() {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (req.body === undefined && (req.method === "POST" || req.method === "PATCH" || req.method === "PUT")) {
      const length = req.headers["content-length"];
      if (req.headers["transfer-encoding"] === undefined && (length === undefined || Number(length) === 0)) {
        req.body = {};
        // Nothing was sent, so there is no media type to be wrong about (a 415 would tell a person who
        // sent nothing to fix a header): the validator checks `{}` as JSON.
        req.headers["content-type"] ??= "application/json";
      }
    }
    next();
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
    const body: unknown = req.body;
    // None, zero bytes (read as `{}` by express.json or emptyBodyAsObject) or `{}`: the same request,
    // also for its Idempotency-Key, whose fingerprint includes the body.
    if (
      (req.headers["transfer-encoding"] === undefined && length === 0) ||
      (typeof body === "object" && body !== null && !Array.isArray(body) && Object.keys(body).length === 0)
    ) {
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

/**
 * An operation's free-text fields (its `freeText` in the generated operation table, from the contract's
 * `x-free-text` marks) refuse a card number: 400 `card_number_in_text` naming the field. Runs after the
 * validator and before the Idempotency-Key is claimed, so nothing of a refused request is stored.
 */
export function noCardNumbersInText(fields: readonly string[]) {
  return (req: Request, _res: Response, next: NextFunction) => {
    try {
      refuseCardNumbersInText(req.body, fields);
    } catch (err) {
      return next(err);
    }
    next();
  };
}
