import nodeModule from "node:module";
import { fileURLToPath } from "node:url";

// V8's code cache for the production build's modules, kept beside the build (issue 36, "start-up"):
// a start with the cache skips parsing and compiling the bundle (2 MB of JavaScript with the contract
// inlined) and its dependencies, for the functions the last uncached start had compiled by the time it
// listened. Node 22.8+ and 24 have it (module.enableCompileCache; flushCompileCache from 22.10); on
// Node 20 this does nothing.
//
// Node writes the cache when a process exits cleanly, which a process killed with SIGKILL (the crash
// suites, an out-of-memory kill) never does: so the server writes it itself once it listens
// (flushCompileCache), and every later start, however the earlier ones ended, reads it. Node keys each
// entry by the module's path and checks its contents' hash, the Node version and V8's flags, so a
// rebuilt bundle, another Node or other heap flags are compiled afresh (and cached anew), never served
// stale code. The directory is beside the code it caches: whoever may write there may change that code
// anyway. Where it cannot be written (a read-only image), the server starts as it would without it.
// NODE_DISABLE_COMPILE_CACHE=1 turns it off (Node's own switch).

/** The part of node:module's API this uses: Node 22.8+ and 24 only, so each member may be missing. */
interface CompileCacheApi {
  enableCompileCache?: (directory: string) => { status: number; message?: string; directory?: string };
  flushCompileCache?: () => void;
  constants?: { compileCacheStatus?: Record<string, number> };
}

// cast: @types/node 20 (the types the server builds with) declares neither function; they are looked up and may be absent.
const api = nodeModule as unknown as CompileCacheApi;

/** What enabling the cache did, for the log: where, or why not. */
export type CompileCacheNote = { directory: string } | { off: string };

/** The directory beside the built entry `entryUrl` (dist/main.js) that holds the cache. */
export function compileCacheDirectory(entryUrl: string): string | null {
  const url = new URL(entryUrl);
  // The sources run through tsx (`npm start` in development) are compiled by tsx's loader, not cached here.
  if (url.protocol !== "file:" || url.pathname.endsWith(".ts")) return null;
  return fileURLToPath(new URL(".compile-cache/", url));
}

let note: CompileCacheNote = { off: "not enabled" };

/** What enableCompileCache did in this process (server-main.ts logs it). */
export const compileCacheNote = (): CompileCacheNote => note;

/**
 * Turns the cache on for the modules loaded from now on (main.ts, before it imports the server).
 * Never throws: a cache that cannot be used leaves the start as it was.
 */
export function enableCompileCache(entryUrl: string): CompileCacheNote {
  note = enable(entryUrl);
  return note;
}

function enable(entryUrl: string): CompileCacheNote {
  const directory = compileCacheDirectory(entryUrl);
  if (directory === null) return { off: "running from the sources" };
  if (!api.enableCompileCache) return { off: `Node ${process.version} has no compile cache` };
  const result = api.enableCompileCache(directory);
  const statuses = api.constants?.compileCacheStatus ?? {};
  if (result.status === statuses.ENABLED || result.status === statuses.ALREADY_ENABLED) {
    return { directory: result.directory ?? directory };
  }
  return { off: result.message ?? "disabled (NODE_DISABLE_COMPILE_CACHE)" };
}

/** Writes what this process compiled and had not read from the cache (once it listens: see above). */
export function flushCompileCache(): void {
  api.flushCompileCache?.();
}
