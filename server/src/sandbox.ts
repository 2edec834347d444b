import { loadConfig } from "./config.ts";
import { IN_MEMORY, startServer } from "./server.ts";

// The embeddable sandbox (docs/testing-your-integration.md "A sandbox of your own in your tests"): a
// fresh server on an in-memory store, on a free loopback port, for one test run. It is the real server
// (every operation, the sandbox clock, webhooks, the response validation against the contract), started
// from explicit settings only, so nothing in the caller's environment (a MONGODB_URI, a DATA_DIR) can
// point it at real data. Its first start makes the sandbox key with scope `*`, which it hands back.

export interface SandboxOptions {
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1: reachable from this machine only. */
  host?: string;
  /**
   * Further server settings (docs/operating.md "Configuration"), over the sandbox's own; e.g.
   * `{ RATE_LIMIT_TEST_PER_SECOND: "25" }` to rehearse the default rate limit.
   */
  settings?: Record<string, string>;
}

export interface Sandbox {
  /** The API's base address, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** A sandbox key with scope `*`. */
  key: string;
  /** Stops the server; the in-memory store and everything in it are gone. */
  stop(): Promise<void>;
}

/**
 * The settings a sandbox starts with. The rate limits are lifted, since a test suite sends requests as
 * fast as it can with one key (a suite that rehearses 429s sets them back in `settings`); logs go
 * nowhere below warnings. Responses are not validated against the contract, as in production: the
 * repository's own suites hold the server to it, and validation costs the sandbox a quarter of its
 * start-up CPU and its first request about a second and a half on a busy machine (test/bench/sandbox-startup.ts).
 */
export const SANDBOX_SETTINGS: Readonly<Record<string, string>> = {
  NODE_ENV: "test",
  DATA_DIR: IN_MEMORY,
  LOG_LEVEL: "warn",
  LOG_FORMAT: "json",
  VALIDATE_RESPONSES: "false",
  RATE_LIMIT_TEST_PER_SECOND: "1000000",
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: "1000000",
  RATE_LIMIT_PAYMENT_LINK_PER_MINUTE: "1000000",
  RATE_LIMIT_PAYMENT_ADDRESS_PER_MINUTE: "1000000",
};

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const config = loadConfig({
    ...SANDBOX_SETTINGS,
    HOST: options.host ?? "127.0.0.1",
    PORT: String(options.port ?? 0),
    ...options.settings,
  });
  if (config.DATA_DIR !== IN_MEMORY || config.MONGODB_URI) {
    throw new Error("A sandbox runs on an in-memory store: leave DATA_DIR and MONGODB_URI out of its settings.");
  }
  const running = await startServer({ config });
  const key = running.bootstrapSecret;
  if (!key) {
    await running.close();
    throw new Error("the sandbox's in-memory store did not make its first key");
  }
  let stopped: Promise<void> | undefined;
  return {
    url: running.url,
    key,
    stop: () => {
      stopped ??= running.close();
      return stopped;
    },
  };
}
