import type { NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import { DomainError, type ErrorCode, type FieldIssue } from "../domain/kernel/errors.ts";
import { displayUrl, maskSensitive } from "../domain/kernel/mask.ts";
import { isRecord } from "../guards.ts";
import { StoreBusyError, UnknownCursorError } from "../store/port.ts";
import { UNAUTHORIZED_DETAIL } from "./auth.ts";
import { contractDocument } from "./contract.ts";
import { isOpenApiRequest, locals } from "./locals.ts";
import { type ProblemBody, problem, problemTypeUri } from "./problems.ts";
import {
  explainFindings,
  FINDINGS_LISTED,
  FINDINGS_READ,
  type FieldError,
  type FieldErrorCode,
  findingsDetail,
  nearestName,
  type RequestParts,
  type ValidatorFinding,
} from "./validator-errors.ts";

// The one error middleware: every failure — domain errors, express-openapi-validator's request and
// security errors, body-parser errors, unknown routes, bugs — leaves as an RFC 9457 problem. Problems
// are sent with res.send (not res.json) so response validation, which only wraps res.json, never turns a
// problem into a 500.

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  type?: string;
  message?: string;
  errors?: ValidatorFinding[];
  /** body-parser: the body's text, on a parse failure. */
  body?: unknown;
  /** body-parser, on a body too large: the limit and the body's length (bytes; no length when chunked). */
  limit?: number;
  length?: number;
}

/**
 * What the middleware reads of a thrown value: the fields http-errors, body-parser and the validator set,
 * each only when it has the type they give it (anything can be thrown).
 */
function httpLikeError(err: unknown): HttpLikeError {
  if (!isRecord(err)) return {};
  const number = (value: unknown) => (typeof value === "number" ? value : undefined);
  const text = (value: unknown) => (typeof value === "string" ? value : undefined);
  const finding = (f: unknown): ValidatorFinding =>
    isRecord(f) ? { path: text(f.path), message: text(f.message), errorCode: text(f.errorCode) } : {};
  return {
    status: number(err.status),
    statusCode: number(err.statusCode),
    type: text(err.type),
    message: text(err.message),
    errors: Array.isArray(err.errors) ? err.errors.map(finding) : undefined,
    body: err.body,
    limit: number(err.limit),
    length: number(err.length),
  };
}

/** What a body that is valid JSON but no object or array is, in words (`null`, a string, a number…); else undefined. */
function jsonScalar(text: unknown): string | undefined {
  if (typeof text !== "string") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null) return "`null`";
  if (typeof value === "string") return "a string";
  if (typeof value === "number") return "a number";
  if (typeof value === "boolean") return `\`${value}\``;
  return undefined;
}

/**
 * Items of `errors[]` from the domain carry no code of their own: `invalid_card` for a card the vault
 * refuses, `invalid_value` for any other rule of the operation (spec/common/problems.tsp FieldErrorCode).
 */
function domainIssues(err: DomainError): FieldError[] | undefined {
  const code: FieldErrorCode = err.code === "invalid_card" ? "invalid_card" : "invalid_value";
  return err.errors?.map((e: FieldIssue & { code?: FieldErrorCode }) => ({
    param: e.param ?? err.param ?? "body",
    code: e.code ?? code,
    message: maskSensitive(e.message),
  }));
}

/**
 * A 415's detail: what the body must be, and what this request said it was. `curl -d` without a
 * Content-Type sends a form (application/x-www-form-urlencoded), the usual way to meet this.
 */
function unsupportedMediaType(contentType: string | undefined): string {
  const sent = contentType?.split(";")[0]?.trim().toLowerCase();
  const said = !sent
    ? "This request did not say what its body is (no Content-Type header)."
    : sent === "application/x-www-form-urlencoded"
      ? "This request sent a form (`application/x-www-form-urlencoded`, what `curl -d` sends unless told otherwise)."
      : `This request sent \`${maskSensitive(sent).slice(0, 100)}\`.`;
  return `The request body must be JSON: send it with \`Content-Type: application/json\`. ${said}`;
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

/** A finding the contract could not explain, in the validator's words (the field named from its path). */
function inValidatorWords(x: ValidatorFinding): FieldError {
  return { param: paramOf(x.path) ?? "body", code: "invalid_value", message: x.message ?? "is invalid" };
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

/** Retry-After of a 503 `acquirer_in_doubt`: the acquirer's trouble is usually a moment's (a time-out, a 429). */
export const ACQUIRER_IN_DOUBT_RETRY_AFTER_SECONDS = 2;

/** Retry-After of a 503 for a busy store: the other connection's turn is milliseconds (store/sqlite/file.ts, writerTurns). */
export const STORE_BUSY_RETRY_AFTER_SECONDS = 1;

/**
 * `request`: what the request sent, where validation findings point (errorMiddleware passes it); without
 * it, findings are reported in the validator's words.
 */
export function toProblem(err: unknown, requestId: string, logger: Logger, request?: RequestParts): ProblemBody {
  if (err instanceof DomainError) {
    // An outage the domain noticed (service_unavailable): the caller gets the fact, the log the cause.
    if (err.cause !== undefined) logger.warn({ err: err.cause, request_id: requestId, code: err.code }, err.message);
    if (err.code === "unauthorized") return problem("unauthorized", UNAUTHORIZED_DETAIL, { requestId });
    return problem(err.code, maskSensitive(err.message), {
      param: err.param,
      requestId,
      errors: domainIssues(err),
    });
  }
  if (err instanceof StoreBusyError) {
    // Another instance held the store for longer than a write waits (StoreBusy in spec/common/problems.tsp):
    // an outage of a moment, not a bug, so 503 with Retry-After (errorMiddleware) and a warning, never a 500.
    logger.warn({ err, request_id: requestId }, "store busy: answered 503 with Retry-After");
    return problem(
      "service_unavailable",
      "The store is busy: another instance held it for longer than a request waits. Nothing was changed; send the request again after the number of seconds in Retry-After.",
      { requestId },
    );
  }
  if (err instanceof UnknownCursorError) {
    // A list's cursor that names nothing there (ListParameters in spec/common/pagination.tsp): an empty
    // page would read as the end of the list.
    const param = err.cursor === "startingAfter" ? "starting_after" : "ending_before";
    const message = `names no object of this list in this environment (\`${maskSensitive(err.id).slice(0, 100)}\`): pass the \`id\` of an object the list returned`;
    return problem("invalid_request", `\`${param}\` ${message}.`, {
      requestId,
      param,
      errors: [{ param, code: "invalid_value", message }],
    });
  }
  const e = httpLikeError(err);
  const status = e.status ?? e.statusCode;
  // body-parser
  if (e.type === "entity.too.large") {
    const limit = typeof e.limit === "number" ? `${e.limit} bytes` : "its limit";
    const sent = typeof e.length === "number" && Number.isFinite(e.length) ? ` (this one is ${e.length})` : "";
    return problem(
      "payload_too_large",
      `The request body is larger than this server takes: at most ${limit}${sent}, its \`BODY_LIMIT_BYTES\` setting.`,
      { requestId },
    );
  }
  if (e.type === "entity.parse.failed") {
    // JSON, but not an object or array (`null`, `"text"`, `5`): express.json takes only those, and
    // every request body in the contract is an object. Saying "not valid JSON" of `null` would mislead.
    const sent = jsonScalar(e.body);
    if (sent !== undefined) {
      return problem("invalid_request", `The request body must be a JSON object (\`{…}\`), not ${sent}.`, {
        requestId,
        param: "body",
        errors: [{ param: "body", code: "invalid_type", message: `must be a JSON object, not ${sent}` }],
      });
    }
    // The parser's own words say where (`… in JSON at position 15`); they can quote the body, so masked.
    // Node 24 adds "(line 1 column 17)" after the position: dropped, so every Node says it the same way.
    const where = maskSensitive((e.message ?? "").replace(/ \(line \d+ column \d+\)$/, "")).slice(0, 200);
    const message = `is not valid JSON${where ? ` (${where})` : ""}`;
    return problem("invalid_request", `The request body is not valid JSON${where ? `: ${where}` : "."}`, {
      requestId,
      param: "body",
      errors: [{ param: "body", code: "invalid_json", message }],
    });
  }
  if (e.type === "charset.unsupported" || e.type === "encoding.unsupported") {
    return problem(
      "unsupported_media_type",
      "The request body must be JSON in UTF-8: send `Content-Type: application/json` (with no charset, or `charset=utf-8`).",
      { requestId },
    );
  }
  // express-openapi-validator
  const code = status !== undefined && status < 500 ? VALIDATOR_CODES[status] : undefined;
  if (code !== undefined) {
    if (code === "unauthorized") return problem(code, UNAUTHORIZED_DETAIL, { requestId });
    if (code === "unsupported_media_type") {
      const sent = request?.headers["content-type"];
      return problem(code, unsupportedMediaType(typeof sent === "string" ? sent : undefined), { requestId });
    }
    // Only request-validation failures name a field; for 404/405 the validator's "path" is the URL.
    if (code !== "invalid_request") return problem(code, maskSensitive(e.message ?? "") || undefined, { requestId });
    const findings = e.errors ?? [];
    const read = findings.slice(0, FINDINGS_READ);
    const explained = request ? explainFindings(request, read) : [];
    const all = explained.length > 0 ? explained : read.map(inValidatorWords);
    const errors = all.slice(0, FINDINGS_LISTED).map((x) => ({
      ...x,
      param: maskSensitive(x.param),
      message: maskSensitive(x.message),
    }));
    const more =
      all.length > errors.length || findings.length > read.length
        ? ` These are the first ${errors.length} problems found; fix them and send the request again to see the rest.`
        : "";
    const detail = findingsDetail(errors);
    return problem(code, detail ? detail + more : maskSensitive(e.message ?? "") || undefined, {
      requestId,
      param: errors[0]?.param,
      errors,
    });
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

/** What a request sent, for explaining validation findings: the operation the validator matched, and its parts. */
function requestParts(req: Request): RequestParts {
  const openapi = isOpenApiRequest(req) ? req.openapi : undefined;
  return {
    method: req.method.toLowerCase(),
    route: openapi?.openApiRoute ?? "",
    body: req.body,
    query: req.query ?? {},
    params: openapi?.pathParams ?? req.params ?? {},
    headers: req.headers,
  };
}

/**
 * `allowedMethods`: the methods the contract has for a request path, sent as `Allow` with a 405 (RFC
 * 9110 §15.5.6), so a client sees what the path does take.
 */
export function errorMiddleware(logger: Logger, allowedMethods: (path: string) => string[] = () => []) {
  return (err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const requestId = String(locals(res).requestId ?? "");
    // The validator's 404 for a path the contract lacks says only "not found": the path is named here.
    const status = isRecord(err) ? err.status : undefined;
    const body =
      status === 404 && !(err instanceof DomainError)
        ? unknownRoute(req, requestId)
        : toProblem(err, requestId, logger, requestParts(req));
    if (body.status === 405) res.setHeader("Allow", allowedMethods(req.path).join(", "));
    if (err instanceof StoreBusyError) res.setHeader("Retry-After", String(STORE_BUSY_RETRY_AFTER_SECONDS));
    // A retry with the same key resumes the charge's open intent at once (intents.ts resumable).
    if (body.code === "acquirer_in_doubt") res.setHeader("Retry-After", String(ACQUIRER_IN_DOUBT_RETRY_AFTER_SECONDS));
    sendProblem(res, body);
  };
}

/**
 * A request for a path no operation has: the problem names it, and the contract's path it most likely
 * meant (`/v1/chargess`, `/v2/charges` → `/v1/charges`), as the trailing-slash one does (guards.ts exactPaths).
 */
function unknownRoute(req: Request, requestId: string): ProblemBody {
  const path = req.path;
  const segments = path.split("/");
  // Each template with the request's own segments in place of its parameters, so ids do not count as edits.
  const candidates = Object.keys(contractDocument().paths)
    .map((template) => template.split("/"))
    .filter((parts) => parts.length === segments.length)
    .map((parts) => parts.map((part, i) => (/^\{\w+\}$/.test(part) ? segments[i] : part)).join("/"));
  const meant = nearestName(path, candidates);
  const hint = meant && meant !== path ? ` (did you mean ${displayUrl(meant, 200)}?)` : "";
  return problem(
    "not_found",
    `No route ${req.method} ${displayUrl(path, 200)}: the API has no such path${hint}. Its paths are listed in the reference at /docs.`,
    { requestId },
  );
}

export function notFoundMiddleware() {
  return (req: Request, res: Response) => {
    sendProblem(res, unknownRoute(req, String(locals(res).requestId ?? "")));
  };
}
