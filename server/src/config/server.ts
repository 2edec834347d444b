import { z } from "zod";
import { bool, group, int, setting } from "./kit.ts";

// The server process and its HTTP listener: where it listens, what it accepts, how it shuts down.

export const serverSettings = group("server", {
  NODE_ENV: setting(
    z.enum(["development", "test", "production"]).default("development"),
    "development, test or production. Production refuses to start without explicit vault keys and turns response validation off by default.",
  ),
  PORT: setting(int(0, 65535).default(3000), "The port the API listens on; 0: one the system picks."),
  HOST: setting(z.string().min(1).default("127.0.0.1"), "The address the API listens on."),
  BASE_URL: setting(
    z.url().optional(),
    "The public base address, used in `url` fields and the OpenAPI `servers` entry. Default: http://HOST:PORT.",
  ),
  VALIDATE_RESPONSES: setting(
    bool.optional(),
    "Validate every response against the contract (default: on except in production).",
  ),
  BODY_LIMIT_BYTES: setting(
    int(1024, 10 * 1024 * 1024).default(100 * 1024),
    "Largest accepted request body, in bytes.",
  ),
  IDEMPOTENCY_TTL_SECONDS: setting(
    int(60, 7 * 24 * 3600).default(24 * 3600),
    "How long an Idempotency-Key is remembered (24 h by default, as IdempotencyKeyHeader documents).",
  ),
  IDEMPOTENCY_LOCK_SECONDS: setting(
    int(1, 3600).default(60),
    "How long a request holding an Idempotency-Key blocks retries with that key (409) before a retry may take it over, on the assumption that its instance died. Longer than any request takes; also how long a call to the acquirer left in doubt waits for its own request before the recovery job resolves it.",
  ),
  TRUST_PROXY: setting(
    z
      .string()
      .min(1)
      .default("false")
      .transform((v): boolean | number | string =>
        v === "false" ? false : v === "true" ? true : /^\d+$/.test(v) ? Number(v) : v,
      ),
    "Express's `trust proxy`: which proxies' X-Forwarded-For to believe for the client address (rate limits per address). `false` (default: the connection's address), `true`, a hop count, or addresses/subnets such as `loopback` or `10.0.0.0/8`.",
  ),
  REQUEST_TIMEOUT_SECONDS: setting(
    int(1, 3600).default(30),
    "A request must arrive whole (headers and body) within this many seconds, or the connection is closed.",
  ),
  HEADERS_TIMEOUT_SECONDS: setting(
    int(1, 3600).default(10),
    "The request headers must arrive within this many seconds.",
  ),
  SHUTDOWN_TIMEOUT_SECONDS: setting(
    int(0, 600).default(10),
    "On SIGTERM/SIGINT: how long in-flight requests and background jobs may take to finish before their connections are cut and the store is closed anyway.",
  ),
  WORKERS: setting(
    int(1, 256).optional(),
    'Server processes (Node cluster workers) sharing the port and the store. Default: one per CPU core in production on MongoDB; 1 on SQLite, whose one writer more processes cannot share out, and everywhere else (docs/operating.md "One server process per core"). The admin CLI ignores it.',
  ),
});
