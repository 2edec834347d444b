import { join } from "node:path";
import type { Config } from "../config.ts";
import { COLLECTIONS } from "../domain/areas.ts";
import type { DocsOf } from "../domain/kernel/records.ts";
import { rateLimitCollections } from "../http/rate-limits.ts";
import { messageOf, StartupError } from "../startup-error.ts";
import type { Store } from "../store/port.ts";
import { openSqliteStore } from "../store/sqlite.ts";
import { dataDirProblem, IN_MEMORY } from "./data-dir.ts";

/** Every collection the server stores: the domain's, and the HTTP layer's own (the rate limiters' counts). */
const STORE_COLLECTIONS = { ...COLLECTIONS, ...rateLimitCollections };
export type ServerStore = Store<DocsOf<typeof STORE_COLLECTIONS>>;

export async function openStore(config: Config): Promise<ServerStore> {
  return openStoreAt(config, { file: "payments.sqlite", database: config.MONGODB_DB });
}

/**
 * The store named `place`: on MongoDB the database `place.database`, on SQLite the file `place.file` under
 * DATA_DIR (a new in-memory database when DATA_DIR is ":memory:"). The server's own store, and each
 * sandbox on demand's (server/src/sandboxes/host.ts).
 */
export async function openStoreAt(
  config: Config,
  place: { file: string; database: string | undefined },
): Promise<ServerStore> {
  // The transaction-misuse guard catches a programming mistake in development and tests, and costs a
  // hook on every promise where it runs (store/common.ts, txGuard): production goes without it.
  const guard = config.NODE_ENV !== "production";
  if (config.MONGODB_URI) {
    // Loaded only when used: the driver's BSON serializer allocates a 17 MB buffer as it loads, which
    // a server on SQLite would otherwise carry for nothing (docs/operating.md "Start-up and memory").
    const { openMongoStore } = await import("../store/mongodb.ts");
    return openMongoStore({
      uri: config.MONGODB_URI,
      dbName: place.database,
      collections: STORE_COLLECTIONS,
      guard,
    });
  }
  const path = config.DATA_DIR === IN_MEMORY ? IN_MEMORY : join(config.DATA_DIR, place.file);
  return openSqliteStore({ path, collections: STORE_COLLECTIONS, guard });
}

/** openStore, with failures as StartupErrors naming DATA_DIR or MONGODB_URI (the server and the CLI). */
export async function openConfiguredStore(config: Config): Promise<ServerStore> {
  try {
    return await openStore(config);
  } catch (err) {
    if (!config.MONGODB_URI) throw dataDirProblem(config, err);
    // The URI may hold a password, so only the driver's reason is shown, never the URI.
    throw new StartupError("MONGODB_URI", `cannot use MongoDB: ${messageOf(err)}`, { cause: err });
  }
}
