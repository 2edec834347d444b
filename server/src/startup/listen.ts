import { createServer, type RequestListener, type Server } from "node:http";
import type { Config } from "../config.ts";
import { boundPort } from "../guards.ts";
import { codeOf, StartupError } from "../startup-error.ts";

/** A listener that cannot start, as a StartupError naming the port or host setting to change. */
function listenProblem(names: { port: string; host: string }, port: number, host: string, err: unknown): unknown {
  const code = codeOf(err);
  if (code === "EADDRINUSE") {
    return new StartupError(
      names.port,
      `${port} is already in use on ${host}; stop what holds it or set ${names.port} to a free port`,
      { cause: err },
    );
  }
  if (code === "EACCES") {
    return new StartupError(names.port, `${port} needs privileges this process lacks; use a port above 1023`, {
      cause: err,
    });
  }
  if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return new StartupError(names.host, `${host} is not an address of this machine (${code})`, { cause: err });
  }
  return err;
}

/** A metrics listener that cannot start, as a StartupError naming the setting to change. */
export function metricsListenProblem(config: Pick<Config, "METRICS_PORT" | "METRICS_HOST">, err: unknown): unknown {
  return listenProblem(
    { port: "METRICS_PORT", host: "METRICS_HOST" },
    config.METRICS_PORT ?? 0,
    config.METRICS_HOST,
    err,
  );
}

/**
 * The API's HTTP server, listening on HOST:PORT, and the address it listens on. A request must arrive
 * whole within REQUEST_TIMEOUT_SECONDS (its headers within HEADERS_TIMEOUT_SECONDS), checked every
 * second, so slow senders cannot hold connections open.
 */
export async function listen(config: Config, app: RequestListener): Promise<{ server: Server; url: string }> {
  const server = await new Promise<Server>((resolve, reject) => {
    const s = createServer(
      {
        requestTimeout: config.REQUEST_TIMEOUT_SECONDS * 1000,
        headersTimeout: config.HEADERS_TIMEOUT_SECONDS * 1000,
        connectionsCheckingInterval: 1000,
      },
      app,
    );
    s.listen(config.PORT, config.HOST);
    s.once("listening", () => resolve(s));
    s.once("error", (err) => reject(listenProblem({ port: "PORT", host: "HOST" }, config.PORT, config.HOST, err)));
  });
  const port = boundPort(server);
  return { server, url: `http://${config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST}:${port}` };
}

/** Closes a server that has taken no request yet (a start-up that fails after listening). */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => server.close(() => resolve()));
}
