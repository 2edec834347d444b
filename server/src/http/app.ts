import express, { type Express } from "express";
import * as OpenApiValidator from "express-openapi-validator";
import type { Logger } from "pino";
import type { Config } from "../config.ts";
import type { Now } from "../domain/context.ts";
import type { Domain } from "../domain/index.ts";
import type { AppStore } from "../domain/records.ts";
import { serviceKeyAuth } from "./auth.ts";
import { contractOperations, loadContract, type OperationId } from "./contract.ts";
import { errorMiddleware, notFoundMiddleware } from "./errors.ts";
import { createHandlers, type Handlers, toExpress } from "./handlers.ts";
import { idempotency } from "./idempotency.ts";
import { observability, type RequestLogWriter, requestLogWriter } from "./observability.ts";

export interface AppDeps {
  config: Pick<Config, "BODY_LIMIT_BYTES" | "VALIDATE_RESPONSES" | "IDEMPOTENCY_TTL_SECONDS" | "REQUEST_LOG">;
  domain: Domain;
  store: AppStore;
  logger: Logger;
  now?: Now;
  /**
   * Where request-log records go when REQUEST_LOG is on. startServer passes its own and flushes it on
   * close; without one the app makes its own, whose last batch (at most REQUEST_LOG_FLUSH_MS of records)
   * is lost if the process exits without a flush.
   */
  requestLog?: RequestLogWriter;
}

/** Operations whose responses must never be kept for idempotent replay (they carry a card number). */
const NEVER_STORE_RESPONSE = new Set<OperationId>(["revealToken"]);

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
  const doc = loadContract();
  const operations = contractOperations();
  const handlers: Handlers = createHandlers(domain);

  const missing = operations.filter((op) => typeof handlers[op.operationId] !== "function");
  if (missing.length > 0) {
    throw new Error(`no handler for operation(s): ${missing.map((op) => op.operationId).join(", ")}`);
  }

  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");

  const requestLog = config.REQUEST_LOG ? (deps.requestLog ?? requestLogWriter({ store, logger })) : null;
  const quietPaths = new Set(operations.filter((op) => HEALTH_OPERATIONS.has(op.operationId)).map((op) => op.path));
  app.use(observability({ logger, now, requestLog, quietPaths }));

  // GET / is for people who open the server's address: where to go next. It is not an API operation
  // (not in the contract, like /docs and /console), so it sits before the validator.
  app.get("/", (_req, res) => {
    res.json(homePage(operations));
  });
  app.use(express.json({ limit: config.BODY_LIMIT_BYTES, type: ["application/json", "application/*+json"] }));

  // Paths in the document are absolute (/v1/...); its `servers` entry is a template for clients.
  doc.servers = [{ url: "/" }];
  app.use(
    OpenApiValidator.middleware({
      // biome-ignore lint/suspicious/noExplicitAny: the validator's document type is stricter than our JSON view of it
      apiSpec: doc as any,
      validateApiSpec: false, // linted at build time (Spectral); skipping saves start-up time
      validateRequests: { allErrors: true, allowUnknownQueryParameters: false },
      validateResponses: config.VALIDATE_RESPONSES ? { allErrors: true } : false,
      validateSecurity: { handlers: { ServiceKeyAuth: serviceKeyAuth(domain.serviceKeys, logger) } },
      validateFormats: true,
    }),
  );

  const keyed = idempotency({ store, now, ttlSeconds: config.IDEMPOTENCY_TTL_SECONDS, logger });
  const keyedNoStore = idempotency(
    { store, now, ttlSeconds: config.IDEMPOTENCY_TTL_SECONDS, logger },
    { storeResponse: false },
  );
  for (const op of operations) {
    const route = op.path.replace(/\{(\w+)\}/g, ":$1");
    // biome-ignore lint/suspicious/noExplicitAny: each handler is typed by its own operation id
    const handler = toExpress(handlers[op.operationId] as any);
    if (op.method === "post") {
      app.post(route, NEVER_STORE_RESPONSE.has(op.operationId) ? keyedNoStore : keyed, handler);
    } else {
      app[op.method](route, handler);
    }
  }

  app.use(notFoundMiddleware());
  app.use(errorMiddleware(logger));
  return app;
}
