import type { NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import { DomainError, type ErrorCode, type FieldIssue } from "../domain/kernel/errors.ts";
import { displayUrl, maskCardNumbers } from "../domain/kernel/mask.ts";
import { UNAUTHORIZED_DETAIL } from "./auth.ts";
import { type ProblemBody, problem, problemTypeUri } from "./problems.ts";

// The one error middleware: every failure — domain errors, express-openapi-validator's request and
// security errors, body-parser errors, unknown routes, bugs — leaves as an RFC 9457 problem. Problems
// are sent with res.send (not res.json) so response validation, which only wraps res.json, never turns a
// problem into a 500.

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  type?: string;
  message?: string;
  errors?: { path?: string; message?: string }[];
}

/** `/body/card`, `.body.card`, `/query/limit`, `/headers/idempotency-key` → `card`, `limit`, `Idempotency-Key`. */
function paramOf(path: string | undefined): string | undefined {
  if (!path) return undefined;
  const parts = path.split(/[/.]/).filter(Boolean);
  const [where, ...rest] = parts;
  if (where === "headers")
    return rest.join(".").replace(/(^|-)([a-z])/g, (_, d: string, c: string) => d + c.toUpperCase());
  if (where === "body" || where === "query" || where === "params" || where === "path") return rest.join(".") || where;
  return parts.join(".");
}

const VALIDATOR_CODES: Record<number, ErrorCode> = {
  400: "invalid_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  413: "payload_too_large",
  415: "unsupported_media_type",
};

export function toProblem(err: unknown, requestId: string, logger: Logger): ProblemBody {
  if (err instanceof DomainError) {
    // An outage the domain noticed (service_unavailable): the caller gets the fact, the log the cause.
    if (err.cause !== undefined) logger.warn({ err: err.cause, request_id: requestId, code: err.code }, err.message);
    if (err.code === "unauthorized") return problem("unauthorized", UNAUTHORIZED_DETAIL, { requestId });
    return problem(err.code, maskCardNumbers(err.message), {
      param: err.param,
      requestId,
      errors: err.errors?.map((e) => ({ ...e, message: maskCardNumbers(e.message) })),
    });
  }
  const e = (err ?? {}) as HttpLikeError;
  const status = e.status ?? e.statusCode;
  // body-parser
  if (e.type === "entity.too.large")
    return problem("payload_too_large", "The request body is too large.", { requestId });
  if (e.type === "entity.parse.failed") {
    return problem("invalid_request", "The request body is not valid JSON.", { requestId, param: "body" });
  }
  if (e.type === "charset.unsupported" || e.type === "encoding.unsupported") {
    return problem("unsupported_media_type", maskCardNumbers(e.message ?? "Unsupported encoding."), { requestId });
  }
  // express-openapi-validator
  if (status !== undefined && status < 500 && VALIDATOR_CODES[status]) {
    const code = VALIDATOR_CODES[status] as ErrorCode;
    const errors: FieldIssue[] = (e.errors ?? []).map((x) => {
      const param = paramOf(maskCardNumbers(x.path ?? ""));
      return { ...(param ? { param } : {}), message: maskCardNumbers(x.message ?? "is invalid") };
    });
    const first = errors[0];
    const detail =
      code === "unauthorized"
        ? UNAUTHORIZED_DETAIL
        : code === "invalid_request" && first
          ? errors.map((x) => (x.param ? `${x.param} ${x.message}` : x.message)).join("; ")
          : maskCardNumbers(e.message ?? "");
    // Only request-validation failures name a field; for 404/405 the validator's "path" is the URL.
    return code === "invalid_request"
      ? problem(code, detail || undefined, { requestId, param: first?.param, errors })
      : problem(code, detail || undefined, { requestId });
  }
  // Anything else is a bug or an outage: log it in full (masked by the logger), tell the client nothing internal.
  logger.error({ err, request_id: requestId }, "unhandled error");
  return problem("internal_error", "An unexpected error occurred; it has been logged with this request id.", {
    requestId,
  });
}

/**
 * Sends a problem. Its `type` becomes absolute here, `<BASE_URL>/docs/errors#<code>`: the public address
 * is the app's (`app.locals.publicUrl`, set by createApp and corrected by startServer once the port is
 * known), so the URI resolves to the error reference this very server serves.
 */
export function sendProblem(res: Response, body: ProblemBody): void {
  if (body.status === 401) res.setHeader("WWW-Authenticate", 'Bearer realm="payments"');
  const publicUrl = String(res.app?.locals.publicUrl ?? "");
  const sent = { ...body, type: problemTypeUri(publicUrl, body.code) };
  res.status(body.status).type("application/problem+json").send(JSON.stringify(sent));
}

/**
 * `allowedMethods`: the methods the contract has for a request path, sent as `Allow` with a 405 (RFC
 * 9110 §15.5.6), so a client sees what the path does take.
 */
export function errorMiddleware(logger: Logger, allowedMethods: (path: string) => string[] = () => []) {
  return (err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const body = toProblem(err, String(res.locals.requestId ?? ""), logger);
    if (body.status === 405) res.setHeader("Allow", allowedMethods(req.path).join(", "));
    sendProblem(res, body);
  };
}

export function notFoundMiddleware() {
  return (req: Request, res: Response) => {
    sendProblem(
      res,
      problem("not_found", `No route ${req.method} ${displayUrl(req.path, 200)}.`, {
        requestId: String(res.locals.requestId ?? ""),
      }),
    );
  };
}
