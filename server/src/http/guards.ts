import type { NextFunction, Request, Response } from "express";
import { DomainError } from "../domain/kernel/errors.ts";

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

/** For operations the contract gives no request body: a body sent anyway is a 400 naming `body`. */
export function noBody() {
  return (req: Request, _res: Response, next: NextFunction) => {
    const length = Number(req.headers["content-length"] ?? 0);
    if (req.headers["transfer-encoding"] !== undefined || length > 0) {
      return next(
        new DomainError("invalid_request", "This operation takes no request body; send none.", {
          param: "body",
          errors: [{ param: "body", message: "must be empty: this operation takes no request body" }],
        }),
      );
    }
    next();
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
          const message = "must be a whole number written in decimal digits";
          return next(
            new DomainError("invalid_request", `${name} ${message}`, {
              param: name,
              errors: [{ param: name, message }],
            }),
          );
        }
      }
    }
    next();
  };
}
