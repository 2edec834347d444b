import { randomBytes } from "node:crypto";
import { IN_MEMORY, loadConfig, type RunningServer, startServer } from "@payments/server";
import { MongoClient } from "mongodb";

// A real server on a random loopback port with response validation on: what the e2e, contract and
// benchmark runs talk to. Each call gets its own store, so suites can run in parallel without seeing
// each other's data: an in-memory SQLite store, or, when MONGODB_URI is set in the environment (the
// GitHub Actions workflow, a developer with a replica set), a MongoDB database of its own with a
// unique name, dropped again by close().

export interface TestServer {
  url: string;
  running: RunningServer;
  /** A sandbox key with scope `*` (the one the first start creates). */
  sandboxKey: string;
  /** Creates a key with the given scopes; `live` makes a production key. */
  key(scopes: string[], options?: { live?: boolean; name?: string }): Promise<string>;
  close(): Promise<void>;
}

/** The MongoDB deployment the suites run on instead of SQLite, when the environment names one. */
export const MONGODB_URI = process.env.MONGODB_URI || undefined;

export async function startTestServer(env: Record<string, string> = {}): Promise<TestServer> {
  const mongo = MONGODB_URI ? { MONGODB_URI, MONGODB_DB: `test_${randomBytes(12).toString("hex")}` } : {};
  const config = loadConfig({
    NODE_ENV: "test",
    HOST: "127.0.0.1",
    PORT: "0",
    DATA_DIR: IN_MEMORY,
    LOG_LEVEL: "silent",
    VALIDATE_RESPONSES: "true",
    ...mongo,
    ...env,
  });
  const running = await startServer({ config });
  if (!running.bootstrapSecret) throw new Error("a fresh in-memory store must create the sandbox key");
  return {
    url: running.url,
    running,
    sandboxKey: running.bootstrapSecret,
    async key(scopes, options = {}) {
      const { secret } = await running.domain.serviceKeys.issue(options.live ?? false, {
        name: options.name ?? `test ${scopes.join(",")}`,
        scopes,
      });
      return secret;
    },
    async close() {
      await running.close();
      if (config.MONGODB_URI) await dropDatabase(config.MONGODB_URI, config.MONGODB_DB);
    },
  };
}

async function dropDatabase(uri: string, name: string): Promise<void> {
  const client = new MongoClient(uri);
  try {
    await client.db(name).dropDatabase();
  } finally {
    await client.close();
  }
}
