import express, { type Express, type RequestHandler } from "express";
import type { Logger } from "pino";
import { type Config, rateLimitSettings } from "../config.ts";
import type { AppStore } from "../domain/areas.ts";
import { createHandlers } from "../domain/areas.ts";
import type { Domain } from "../domain/index.ts";
import type { Now } from "../domain/kernel/caller.ts";
import { authenticate, scopeCheck } from "./auth.ts";
import { consoleApi, consoleCookie, consoleRefusals, sessionRoutes } from "./console.ts";
import { contractDocument, contractOperations, type OperationId } from "./contract.ts";
import { eventStreams } from "./event-stream.ts";
import { contractValidation, dispatch, jsonBody, operationChecks, problemAnswers } from "./front.ts";
import { securityHeaders } from "./guards.ts";
import { toExpress } from "./handlers.ts";
import { idempotency } from "./idempotency.ts";
import { locals } from "./locals.ts";
import {
  observability,
  operationResolver,
  type RequestLogWriter,
  type RequestMetrics,
  requestLogWriter,
} from "./observability.ts";
import { mountPages } from "./pages.ts";
import { loadPageAssets, payPages } from "./pay-page.ts";
import { publicGuards } from "./public-operations.ts";
import { type RateLimitStore, type RateLimits, rateLimits } from "./rate-limits.ts";
import { unknownSandboxPages } from "./sandbox-pages.ts";
import { type SandboxSimulateOptions, sandboxSimulate } from "./sandbox-simulate.ts";
import { threeDSecurePages } from "./three-d-secure-page.ts";

export interface AppDeps {
  config: Pick<
    Config,
    | "BODY_LIMIT_BYTES"
    | "VALIDATE_RESPONSES"
    | "IDEMPOTENCY_TTL_SECONDS"
    | "IDEMPOTENCY_LOCK_SECONDS"
    | "REQUEST_LOG"
    | "TEST_CRASH_AFTER_COMMITS"
    | "RATE_LIMIT_LIVE_PER_SECOND"
    | "RATE_LIMIT_TEST_PER_SECOND"
    | "RATE_LIMIT_ENVIRONMENT_KEYS"
    | "RATE_LIMIT_ANONYMOUS_PER_MINUTE"
    | "RATE_LIMIT_PAYMENT_LINK_PER_MINUTE"
    | "RATE_LIMIT_PAYMENT_ADDRESS_PER_MINUTE"
    | "TRUST_PROXY"
    | "BASE_URL"
    | "CONSOLE_ENABLED"
    | "CONSOLE_SESSION_TTL_SECONDS"
    | "EVENT_STREAMS_PER_KEY"
  >;
  domain: Domain;
  /** The domain's collections and the rate limiters' own (server.ts openStore opens both). */
  store: AppStore & RateLimitStore;
  logger: Logger;
  now?: Now;
  /**
   * Where request-log records go when REQUEST_LOG is on. startServer passes its own and flushes it on
   * close; without one the app makes its own, whose last batch (at most REQUEST_LOG_FLUSH_MS of records)
   * is lost if the process exits without a flush.
   */
  requestLog?: RequestLogWriter;
  /** The rate limiters; startServer passes its own so it can sweep and flush their shared counts. */
  limits?: RateLimits;
  /** The server's public address (default BASE_URL); startServer's is known once it listens. */
  publicUrl?: () => string;
  /** Where each request is counted for the metrics (METRICS_PORT); none: not counted. */
  metrics?: RequestMetrics;
  /** How the Sandbox-Simulate header's `latency=<ms>` waits (tests pass their own). */
  simulate?: SandboxSimulateOptions;
  /**
   * Runs before everything else: hands a request whose key belongs to a sandbox on demand to that
   * sandbox's own app (server/src/sandboxes/host.ts), which logs, limits and answers it itself.
   */
  front?: RequestHandler;
  /**
   * The contract's validation chain (front.ts contractValidation), when one is shared by several apps: the
   * sandboxes on demand's apps share one, so the validator compiles each operation's schemas once per
   * process, not once per sandbox. Default: this app's own, with the domain's scope check.
   */
  validation?: RequestHandler[];
  /**
   * Where this app's keyless pages (the hosted payment page, the 3-D Secure challenge) and the public
   * payment are reached, before their own path: nothing for the account's app, `/sandboxes/{id}` for a
   * sandbox on demand's, whose pages the account's front hands over without it (sandbox-pages.ts).
   */
  pathPrefix?: string;
}

/**
 * Fault injection for the crash tests (TEST_CRASH_AFTER_COMMITS, refused in production): SIGKILL right
 * after the n-th committed change, the moment between "stored" and "answered" that a kill from outside
 * rarely hits.
 */
function crashAfterCommits(n: number | undefined): (() => void) | undefined {
  if (n === undefined) return undefined;
  let commits = 0;
  return () => {
    if (++commits === n) process.kill(process.pid, "SIGKILL");
  };
}

/** The health probes (spec/resources/health.tsp): public, and never in the request log. */
const HEALTH_OPERATIONS = new Set<OperationId>(["getLiveness", "getReadiness"]);

/** What GET / answers: links to the reference, the console, the contract and the health probes. */
export function homePage(operations: readonly { operationId: string; path: string }[]) {
  const pathOf = (id: OperationId) => operations.find((op) => op.operationId === id)?.path;
  return {
    name: "Payments API",
    api: "/v1",
    docs: "/docs",
    console: "/console",
    health: { liveness: pathOf("getLiveness"), readiness: pathOf("getReadiness") },
    authentication: "Authorization: Bearer <service key>",
  };
}

/** Builds the Express app from the generated contract. Throws if an operation has no handler. */
export function createApp(deps: AppDeps): Express {
  const { config, domain, store, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const doc = contractDocument();
  const operations = contractOperations();
  const handlers = createHandlers(domain, {
    afterCommit: crashAfterCommits(config.TEST_CRASH_AFTER_COMMITS),
  });

  const missing = operations.filter((op) => typeof handlers[op.operationId] !== "function");
  if (missing.length > 0) {
    throw new Error(`no handler for operation(s): ${missing.map((op) => op.operationId).join(", ")}`);
  }

  const app = express();
  // The public address: problem `type` URIs, the reference's `servers` entry, the console's and the
  // pay page's same-origin checks name it. Read through startServer's getter, which knows the port once
  // it listens when the configuration left the port to the system (PORT=0).
  const publicUrl = deps.publicUrl ?? (() => config.BASE_URL);
  Object.defineProperty(app.locals, "publicUrl", { get: publicUrl, enumerable: true });
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");
  app.set("trust proxy", config.TRUST_PROXY);
  if (deps.front) app.use(deps.front);

  const requestLog = config.REQUEST_LOG ? (deps.requestLog ?? requestLogWriter({ store, logger })) : null;
  const limits = deps.limits ?? rateLimits({ store, now, logger, settings: rateLimitSettings(config) });
  const quietPaths = new Set<string>(
    operations.filter((op) => HEALTH_OPERATIONS.has(op.operationId)).map((op) => op.path),
  );
  const metrics = deps.metrics ? { record: deps.metrics, operationOf: operationResolver(operations) } : undefined;
  app.use(observability({ logger, now, requestLog, quietPaths, metrics }));
  app.use(securityHeaders());

  // GET / is for people who open the server's address: where to go next. It is not an API operation
  // (not in the contract, like /docs and /console), so it sits before the validator.
  app.get("/", (_req, res) => {
    res.json(homePage(operations));
  });
  // The reference and the console's pages (not API operations either).
  mountPages(app, { console: config.CONSOLE_ENABLED });
  const consoleDeps = {
    sessions: domain.consoleSessions,
    cookie: consoleCookie(config.BASE_URL, config.CONSOLE_SESSION_TTL_SECONDS),
    logger,
  };
  // Who is calling, then whether they may call this often, before any body is read. The console's
  // requests (/console/api/v1/...) identify their caller by session and go on as /v1/... requests.
  if (config.CONSOLE_ENABLED) app.use(consoleApi(consoleDeps));
  app.use(authenticate(domain.serviceKeys));
  // Every limit counts the request before anything else reads the store for it or reads its body, so a
  // client over its limit costs one refusal, whatever it sent (the pay operation's too: rate-limits.ts).
  app.use(limits.perKey, limits.anonymous, limits.acquirerNotifications, ...limits.paymentLinks);
  // The sandbox clock is one per store (domain/sandbox-clock): a sandbox request reads its offset first,
  // so what it makes carries the time an advance on any instance set. So does a request without a key
  // (a hosted payment page and its payment, whose link may be the sandbox's); production requests and the
  // health probes need no sandbox time.
  app.use((req, res, next) => {
    const caller = locals(res).caller;
    if (caller?.livemode || quietPaths.has(req.path)) return next();
    domain.sandboxClock.refresh().then(() => next(), next);
  });
  if (config.CONSOLE_ENABLED) app.use(consoleRefusals());
  // The hosted payment page (GET /pay/{id}): a page for payers, not an API operation, so it sits before
  // the contract's validator, like the other pages.
  const pageAssets = loadPageAssets();
  app.use(payPages({ domain, assets: pageAssets, pathPrefix: deps.pathPrefix }));
  // A sandbox's page (/sandboxes/{sbx_id}/pay/…) that reached this app has no sandbox to go to.
  app.use(unknownSandboxPages(pageAssets));
  // The sandbox issuer's 3-D Secure challenge page (GET and POST /3ds/{tx_id}), a page like the others.
  app.use(threeDSecurePages({ domain, publicUrl, pathPrefix: deps.pathPrefix }));
  // Its depth and breadth bounded before it is parsed (body-bounds.ts), so refusing costs what reading does.
  app.use(...jsonBody(config.BODY_LIMIT_BYTES));
  if (config.CONSOLE_ENABLED) app.use(sessionRoutes(consoleDeps));

  // The contract's validation (front.ts, shared with the sandbox mock's front): exact paths, then the
  // validator, with the key's scopes checked against each operation's.
  app.use(
    ...(deps.validation ??
      contractValidation({
        security: scopeCheck(domain.serviceKeys, logger),
        validateResponses: config.VALIDATE_RESPONSES,
      })),
  );

  const keys = {
    store,
    now,
    ttlSeconds: config.IDEMPOTENCY_TTL_SECONDS,
    lockSeconds: config.IDEMPOTENCY_LOCK_SECONDS,
    logger,
  };
  const chains = new Map<string, RequestHandler[]>();
  const streams = eventStreams({ perKey: config.EVENT_STREAMS_PER_KEY, leases: domain.streamLeases });
  const guardsOfPublic = publicGuards(domain, publicUrl);
  for (const op of operations) {
    // biome-ignore lint/suspicious/noExplicitAny: the cast: each handler is typed by its own operation id, which `op` is
    const handler = toExpress(handlers[op.operationId] as any, op, streams);
    // The checks that need no stored data (front.ts), then Sandbox-Simulate (failure injection, every
    // POST) before the key is claimed, so a simulated 429 or a refusal of the header is not stored as the
    // key's answer, then the Idempotency-Key, then the operation.
    const chain = operationChecks(doc, op, guardsOfPublic[op.operationId] ?? []);
    if (op.method === "post") chain.push(sandboxSimulate(op, deps.simulate), idempotency(keys, op));
    chain.push(handler);
    chains.set(`${op.method.toUpperCase()} ${op.path}`, chain);
  }
  app.use(dispatch(chains));

  app.use(...problemAnswers(logger, operations));
  return app;
}
