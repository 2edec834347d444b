// The checkpointer thread (checkpointer.ts starts it): copies committed pages from the write-ahead log
// into the database file once every workerData.intervalMs, passively, until the store asks it to stop.
// Plain JavaScript, so it runs the same under tsx, vitest and the production build.
import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";

const Database = createRequire(import.meta.url)(workerData.driver);
const db = new Database(workerData.path);
// exec only, never a prepared statement: on Node 24, better-sqlite3 12 aborts the process when a
// statement object outlives the thread's environment at its exit (its destructor removes a cleanup
// hook from an environment already gone: WiseLibs/better-sqlite3#1476, #1515). exec keeps none.
db.exec("PRAGMA busy_timeout = 1000");
const checkpoint = () => {
  try {
    db.exec("PRAGMA wal_checkpoint(PASSIVE)");
  } catch {
    // Busy or closing: the next turn tries again, and the writer's own threshold bounds the log meanwhile.
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on("message", () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
