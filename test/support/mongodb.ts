import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { MongoClient } from "mongodb";

// Which store the suites run on, decided once before any test file (vitest `globalSetup`,
// test/vitest.config.ts), and said. With MONGODB_URI set the suites run on MongoDB (support/server.ts),
// so a deployment that cannot be used stops the whole run at once with the server's own one-line reason,
// instead of every test server failing on its own after a timeout, or a run on SQLite passing for one
// on MongoDB. REQUIRE_MONGODB (set by the GitHub workflow) makes a missing MONGODB_URI an error too.
// `npm run check:mongodb -w @payments/tests` runs the same check as a command: turbo runs it before the
// server's and these suites (turbo.json), so that `npm test` with an unusable MONGODB_URI stops within
// seconds instead of after the suites that do not need MongoDB.

/** REQUIRE_MONGODB set to anything but empty, 0 or false. */
export function mongoRequired(env: Record<string, string | undefined>): boolean {
  return !["", "0", "false"].includes(env.REQUIRE_MONGODB ?? "");
}

/**
 * Resolves with the sentence to print when the run may go ahead; rejects with the reason it may not:
 * MONGODB_URI is set and the store cannot open on it (the same start-up as `npm start`, in a throwaway
 * database that is dropped again), or REQUIRE_MONGODB is set without MONGODB_URI.
 */
export async function checkStoreChoice(env: Record<string, string | undefined>): Promise<string> {
  const uri = env.MONGODB_URI || undefined;
  if (!uri) {
    if (mongoRequired(env)) {
      throw new Error("REQUIRE_MONGODB is set, so this run must use MongoDB, and MONGODB_URI is not set");
    }
    return "The suites run on SQLite: MONGODB_URI is not set (docs/operating.md 'Running on MongoDB').";
  }
  const dbName = `test_preflight_${randomBytes(8).toString("hex")}`;
  // Loaded only now: a run on SQLite need not load the server.
  const { IN_MEMORY, loadConfig, openStore } = await import("@payments/server");
  let store: Awaited<ReturnType<typeof openStore>>;
  try {
    store = await openStore(
      loadConfig({ NODE_ENV: "test", DATA_DIR: IN_MEMORY, MONGODB_URI: uri, MONGODB_DB: dbName, LOG_LEVEL: "silent" }),
    );
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`MONGODB_URI is set, so the suites run on MongoDB, and it cannot be used: ${reason}`);
  }
  await store.close();
  const client = new MongoClient(uri);
  try {
    await client.db(dbName).dropDatabase();
  } finally {
    await client.close();
  }
  return `The suites run on MongoDB (MONGODB_URI, database ${dbName} opened and dropped).`;
}

export default async function setup(): Promise<void> {
  console.info(await checkStoreChoice(process.env));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    console.info(await checkStoreChoice(process.env));
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  }
}
