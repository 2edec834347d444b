import type { Express } from "express";
import type { Logger } from "pino";
import { type Config, rateLimitSettings } from "../config.ts";
import type { Domain } from "../domain/index.ts";
import type { Now } from "../domain/kernel/caller.ts";
import { type AppDeps, createApp } from "../http/app.ts";
import { requestLogWriter } from "../http/observability.ts";
import { type RateLimits, rateLimits } from "../http/rate-limits.ts";
import type { ResourceStack } from "./resource-stack.ts";
import type { ServerStore } from "./store.ts";

/** What an app needs beyond its store and domain: the parts where the account's and a sandbox's differ. */
export type AppExtras = Pick<AppDeps, "front" | "validation" | "metrics" | "pathPrefix">;

export interface HttpAssembly {
  config: Config;
  domain: Domain;
  store: ServerStore;
  logger: Logger;
  now: Now;
  /** The server's public address, known once it listens (startServer's getter). */
  publicUrl: () => string;
  /** Who owns what is closed, in the stack's failure messages: "the" (the account's) or "the sandbox's". */
  owner: string;
}

/**
 * The HTTP side of a store and its domain, as both the account's server (server.ts) and each sandbox on
 * demand (sandboxes/host.ts) start it: the request-log writer (records written in batches) and the rate
 * limiters (quota leased from the store), both flushed on `stack`'s close before the store closes, and
 * the Express app over them. `limits` is handed back for the background jobs, which sweep it.
 */
export function assembleHttp(
  stack: ResourceStack,
  parts: HttpAssembly,
  extras: AppExtras = {},
): { app: Express; limits: RateLimits } {
  const { config, domain, store, logger, now, publicUrl } = parts;
  const requestLog = requestLogWriter({ store, logger });
  const limits = rateLimits({ store, now, logger, settings: rateLimitSettings(config) });
  stack.defer(`${parts.owner} request log and rate limits`, () => Promise.all([requestLog.close(), limits.flush()]));
  const app = createApp({ config, domain, store, logger, now, requestLog, limits, publicUrl, ...extras });
  return { app, limits };
}
