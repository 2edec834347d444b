// The checkpointer: a worker thread (checkpointer-worker.mjs) with its own connection.

import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/**
 * Pages the write-ahead log may hold before the connection that commits copies them into the database
 * itself (SQLite's automatic checkpoint, 1,000 pages by default). The checkpointer thread (below)
 * copies them long before; this only bounds the log should that thread stop.
 */
export const WAL_AUTOCHECKPOINT_PAGES = 32_768;
/** How often the checkpointer thread copies committed pages from the write-ahead log into the database. */
const CHECKPOINT_INTERVAL_MS = 1000;

/**
 * The checkpointer: a thread with its own connection that copies committed pages from the write-ahead
 * log into the database file, off the event loop. Left to the committing connection (SQLite's
 * default), that copy and its two fsyncs land inside whichever commit crosses the threshold, and that
 * request, and every one queued behind it, waits milliseconds longer than the rest: the latency tail
 * under steady load (docs/operating.md "Production"). It runs once a second, not more: once it has
 * copied everything, the next write starts the log over, and starting over costs that write an fsync
 * of the log's new header, so the log is left to grow for a second between starts. Only passive
 * checkpoints: they never block the writer. One that waits for writers (RESTART or TRUNCATE) once the
 * log passed a bound stalled every request behind it for 100 ms and more at 500 charges/s (p99 147 ms
 * against 37 ms passive only, npm run bench, built-500); WAL_AUTOCHECKPOINT_PAGES bounds the log.
 * Committed transactions are durable in the log already: checkpoints change where they live, not whether.
 */
export function startCheckpointer(path: string): Worker {
  // A JavaScript file beside this one (and beside the bundle in dist/, copied there by build.mjs), so the
  // thread needs no TypeScript loader.
  const worker = new Worker(new URL("./checkpointer-worker.mjs", import.meta.url), {
    workerData: {
      path,
      driver: createRequire(import.meta.url).resolve("better-sqlite3"),
      intervalMs: CHECKPOINT_INTERVAL_MS,
    },
    // Plain JavaScript: none of the process's own flags. A loader the process was started with
    // (`--import tsx`, an operator's instrumentation) would load into the thread too, and on Node 24
    // tsx alone outgrows the limits below (ERR_WORKER_OUT_OF_MEMORY, the contender fixture in CI).
    execArgv: [],
    // A few megabytes of heap is all it ever uses; the limits keep a thread per store small.
    resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1 },
  });
  worker.unref();
  return worker;
}
