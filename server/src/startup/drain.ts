import type { Server } from "node:http";
import type { Logger } from "pino";
import type { Scheduled } from "./jobs.ts";

/**
 * The first half of a graceful shutdown: the server stops accepting connections; requests under way
 * finish (each connection closes once idle) and so do background-job runs under way, for at most
 * `timeoutMs`; then whatever is left is cut. The caller then closes the rest (its resource stack).
 */
export async function drain(options: {
  server: Server;
  jobs: Scheduled[];
  timeoutMs: number;
  logger: Logger;
}): Promise<void> {
  const { server, logger } = options;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // server.close() closes the idle keep-alive connections once; a busy one becomes idle when its
  // response is sent, so look again until none is left.
  const sweep = setInterval(() => server.closeIdleConnections(), 25);
  let timer: NodeJS.Timeout | undefined;
  const drained = await Promise.race([
    Promise.all([closed, ...options.jobs.map((job) => job.stop())]).then(() => true),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), options.timeoutMs);
    }),
  ]);
  clearInterval(sweep);
  clearTimeout(timer);
  if (!drained) {
    logger.warn({ timeout_ms: options.timeoutMs }, "shutdown timeout: cutting the requests still under way");
    server.closeAllConnections();
    await closed;
  }
}
