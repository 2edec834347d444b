import express, { type ErrorRequestHandler, type Express, type RequestHandler } from "express";
import * as OpenApiValidator from "express-openapi-validator";
import type { Logger } from "pino";
import { DomainError } from "../domain/kernel/errors.ts";
import type { ServiceKeyDoc } from "../domain/service-keys/records.ts";
import { isWellFormedSecret, prefixOf } from "../domain/service-keys/service-keys.ts";
import { listCheck, STATELESS_CHECKS, type StatelessCheck } from "../domain/stateless-checks.ts";
import { isRecord } from "../guards.ts";
import { authenticate, type KeyAuthenticator, scopeCheck } from "./auth.ts";
import { refuseUnboundedJson } from "./body-bounds.ts";
import { type ContractOperation, contractDocument, contractOperations, type OpenApiDocument } from "./contract.ts";
import { errorMiddleware, notFoundMiddleware } from "./errors.ts";
import {
  emptyBodyAsObject,
  exactPaths,
  noBody,
  noCardNumbersInText,
  securityHeaders,
  strictIntegers,
} from "./guards.ts";
import { isOpenApiRequest } from "./locals.ts";
import { observability } from "./observability.ts";
import { mountPages } from "./pages.ts";
import { publicRequestGuards } from "./public-operations.ts";
import { validatorDocument } from "./validator/document.ts";
import { hintAt, operationHints } from "./validator/hints.ts";

// The server's front: every check of a request that needs no stored data — how the body is read and
// bounded, the contract's validation and its problems, exact paths, the unknown route's answer, the
// per-operation guards (no body where none is taken, integers in decimal, no card number or secret in
// free text, the public pay operation's same-origin rule) and the error middleware. The server
// (app.ts createApp) puts its stateful steps between these pieces; the sandbox mock (test/mock/mock.ts)
// runs them as they are in front of Prism (createStatelessFront below), so the mock refuses what the
// server refuses, with the same status, code, `param` and words (issue 34: "the mock's errors are the
// server's"). Nothing here is written twice: each piece is the one both use.

/** An operation's query parameters, as the contract's generated hints list them (validator/hints.ts). */
const queryParameters = (op: ContractOperation) =>
  operationHints(op.method, op.path).parameters.filter((p) => p.in === "query");

/** The names of an operation's query parameters whose schema is an integer. */
function integerQueryParameters(op: ContractOperation): string[] {
  return queryParameters(op)
    .filter((p) => hintAt(p.hint).types?.includes("integer"))
    .map((p) => p.name);
}

/** Whether an operation is a list (ListParameters, spec/common/pagination.tsp: it takes the `starting_after` cursor). */
function isList(op: ContractOperation): boolean {
  return queryParameters(op).some((p) => p.name === "starting_after");
}

/** Reads a JSON body, bounded before it is parsed (body-bounds.ts), and reads an empty one as `{}`. */
export function jsonBody(limitBytes: number): RequestHandler[] {
  return [
    express.json({
      limit: limitBytes,
      type: ["application/json", "application/*+json"],
      verify: (_req, _res, raw) => refuseUnboundedJson(raw),
    }),
    emptyBodyAsObject(),
  ];
}

/**
 * The contract's validation: exact paths, then express-openapi-validator on a copy of the contract of
 * its own (validator/document.ts: what validation reads, no prose or examples; its `servers` rewritten:
 * paths in the document are absolute), with `security` as the scope check.
 */
export function contractValidation(options: {
  security: ReturnType<typeof scopeCheck>;
  validateResponses: boolean;
}): RequestHandler[] {
  const doc = validatorDocument(contractDocument());
  return [
    exactPaths(),
    ...(OpenApiValidator.middleware({
      // biome-ignore lint/suspicious/noExplicitAny: the cast: the validator's document type is stricter than our JSON view of it
      apiSpec: doc as any,
      validateApiSpec: false, // linted at build time (Spectral); skipping saves start-up time
      validateRequests: { allErrors: true, allowUnknownQueryParameters: false },
      validateResponses: options.validateResponses ? { allErrors: true } : false,
      validateSecurity: { handlers: { ServiceKeyAuth: options.security } },
      // "full": dates are checked against the calendar (no 30 February), not only their shape.
      validateFormats: true,
      ajvFormats: { mode: "full" },
      // cast: the validator's handlers take its OpenApiRequest, an Express Request it extends with `openapi`.
    }) as RequestHandler[]),
  ];
}

/**
 * An operation's checks after validation that need no stored data, in the order the server runs them:
 * no body where the contract takes none, integer query parameters in decimal, the public operation's
 * own guards (`publicGuards`, which the caller gives: the server's include stateful ones), and no card
 * number or secret in free text.
 */
export function operationChecks(
  doc: Readonly<OpenApiDocument>,
  op: ContractOperation,
  publicGuards: readonly RequestHandler[] = [],
): RequestHandler[] {
  const spec = doc.paths[op.path]?.[op.method];
  // An operation the contract gives no request body refuses one, rather than ignore what was sent.
  const checks: RequestHandler[] = spec?.requestBody === undefined ? [noBody()] : [];
  const integers = integerQueryParameters(op);
  if (integers.length > 0) checks.push(strictIntegers(integers));
  if (op.public) checks.push(...publicGuards);
  if (op.freeText.length > 0) checks.push(noCardNumbersInText(op.freeText));
  return checks;
}

/**
 * Runs the operation the validator has matched: it sets `req.openapi` (the contract's path template
 * and the path parameters, decoded) for every request it lets through, so the operation is one map
 * lookup away. Registering each operation as an Express route instead had the router test, on every
 * request, the pattern of each route before the right one (dozens), and the validator's app.param
 * hooks copy each path parameter once more: together about a tenth of a GET's CPU in the profiles of
 * the bench (docs/contributing.md "Benchmark"), for an answer the validator already has. Each chain runs as Express would run the route's
 * handlers: next() moves on, next(err) and a rejected promise go to the error middleware.
 */
export function dispatch(chains: ReadonlyMap<string, RequestHandler[]>): RequestHandler {
  return (req, res, next) => {
    const openapi = isOpenApiRequest(req) ? req.openapi : undefined;
    const chain = openapi ? chains.get(`${req.method} ${openapi.openApiRoute}`) : undefined;
    if (!openapi || !chain) return next();
    req.params = openapi.pathParams;
    const step = (i: number) => (err?: unknown) => {
      if (err !== undefined && err !== null) return next(err);
      const handle = chain[i];
      if (!handle) return next();
      try {
        const result: unknown = handle(req, res, step(i + 1));
        if (result instanceof Promise) result.catch((e: unknown) => next(e ?? new Error("Rejected promise")));
      } catch (e) {
        next(e);
      }
    };
    step(0)();
  };
}

/** The last two steps: a path no operation has (its 404 names the nearest path), then every error as a problem. */
export function problemAnswers(
  logger: Logger,
  operations: readonly ContractOperation[],
): [RequestHandler, ErrorRequestHandler] {
  // The contract's methods per path template, for the Allow header of a 405.
  const templates = operations.map((op) => ({
    pattern: new RegExp(`^${op.path.replace(/\{\w+\}/g, "[^/]+")}$`),
    method: op.method.toUpperCase(),
  }));
  return [
    notFoundMiddleware(),
    errorMiddleware(logger, (path) => templates.filter((t) => t.pattern.test(path)).map((t) => t.method)),
  ];
}

/** When the mock's stand-in key was made: no time in particular (nothing reads it). */
const MOCK_KEY_CREATED = "2026-01-01T00:00:00.000Z";

/**
 * Keys as a front without a store sees them: any well-formed secret (`key_test_…`/`key_live_…` and 32
 * base62 characters) is taken, with every scope, since whether it exists, and what it may do, is
 * stored; a missing or malformed one is refused as the server refuses it (the same 401).
 */
export const wellFormedKeys: KeyAuthenticator & Parameters<typeof scopeCheck>[0] = {
  async authenticate(secret: string) {
    if (!isWellFormedSecret(secret)) throw new DomainError("unauthorized", "The service key is malformed.");
    const key: ServiceKeyDoc = {
      id: "kid_mock",
      livemode: secret.startsWith("key_live_"),
      created_at: MOCK_KEY_CREATED,
      name: "Any well-formed key (mock)",
      scopes: ["*"],
      prefix: prefixOf(secret),
      // Never compared: a front without a store takes every well-formed secret.
      secret_hash: "",
      previous_secret_hash: null,
      previous_expires_at: null,
      last_used_at: null,
      expires_at: null,
      revoked_at: null,
    };
    return key;
  },
  async touch() {},
};

/** What a `pass` handler throws (or hands to next()) to refuse, answered as the server answers it. */
export { DomainError };

/** Runs a use case's store-free rule on the request body (the mock's front has no use case to run it). */
function statelessCheck(check: StatelessCheck): RequestHandler {
  return (req, _res, next) => {
    try {
      check({ body: req.body, query: isRecord(req.query) ? req.query : {} }, new Date());
    } catch (err) {
      return next(err);
    }
    next();
  };
}

export interface StatelessFrontOptions {
  logger: Logger;
  /** The front's public address: problem `type`s and the same-origin rule name it. */
  publicUrl: () => string;
  /** The largest body taken (the server's BODY_LIMIT_BYTES). */
  bodyLimitBytes: number;
  /** Answers a request every check passed (the sandbox mock: Prism's success answer). */
  pass: RequestHandler;
}

/**
 * An Express app of the server's front alone: what a request gets from the server when something
 * about it is wrong that needs no stored data, and `pass` for the rest. It also serves the error
 * reference (/docs/errors), which every problem's `type` links to, and the API reference (/docs).
 */
export function createStatelessFront(options: StatelessFrontOptions): Express {
  const { logger } = options;
  const doc = contractDocument();
  const operations = contractOperations();
  const app = express();
  Object.defineProperty(app.locals, "publicUrl", { get: options.publicUrl, enumerable: true });
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");
  app.use(observability({ logger, now: () => new Date(), requestLog: null }));
  app.use(securityHeaders());
  mountPages(app, { console: false });
  app.use(authenticate(wellFormedKeys));
  app.use(...jsonBody(options.bodyLimitBytes));
  app.use(...contractValidation({ security: scopeCheck(wellFormedKeys, logger), validateResponses: false }));
  const guards = publicRequestGuards(options.publicUrl);
  const chains = new Map<string, RequestHandler[]>();
  for (const op of operations) {
    // The use case's own rules that need no store (domain/stateless-checks.ts), where the server runs them.
    const checks = [STATELESS_CHECKS[op.operationId], isList(op) ? listCheck : undefined].filter(
      (check): check is StatelessCheck => check !== undefined,
    );
    chains.set(`${op.method.toUpperCase()} ${op.path}`, [
      ...operationChecks(doc, op, guards[op.operationId] ?? []),
      ...checks.map(statelessCheck),
      options.pass,
    ]);
  }
  app.use(dispatch(chains));
  app.use(...problemAnswers(logger, operations));
  return app;
}
