import { createRequire } from "node:module";
import { type DestinationStream, type Logger, pino } from "pino";
import { maskSensitive } from "./domain/kernel/mask.ts";

/**
 * Structured log lines: JSON (one object a line: production, tests, anything that ships logs), or
 * human-readable lines through pino-pretty (`LOG_FORMAT=pretty`, the development default). Every line
 * passes through maskSensitive before it is written, in either format (pino-pretty formats the
 * already masked JSON), so a card number that reaches a log by any path (a URL, an error message, a
 * stack) shows only its first four and last four digits, and a credential (a service-key or webhook
 * secret, a console session or payment-page token) only its type and first four characters. Bodies
 * are never logged, so a CVC never is.
 */
export function createLogger(
  level: string,
  destination?: DestinationStream,
  options: { format?: "json" | "pretty"; base?: Record<string, unknown> } = {},
): Logger {
  const settings = {
    level,
    // Fields on every line: none, or a cluster worker's id (main.ts).
    base: options.base,
    timestamp: pino.stdTimeFunctions.isoTime,
    hooks: { streamWrite: (line: string) => maskSensitive(line) },
  };
  if (options.format === "pretty") return pino(settings, prettyStream(destination));
  return destination ? pino(settings, destination) : pino(settings);
}

/**
 * pino-pretty as a synchronous stream in this thread (not a worker transport), loaded only when asked
 * for, so JSON logging never pays for it.
 */
function prettyStream(destination?: DestinationStream): DestinationStream {
  // cast: require() types what it loads as any; the module is pino-pretty, typed by its own declarations.
  const pretty = createRequire(import.meta.url)("pino-pretty") as typeof import("pino-pretty");
  return pretty({
    sync: true,
    colorize: destination === undefined && process.stdout.isTTY === true,
    translateTime: "SYS:HH:MM:ss.l",
    singleLine: true,
    ignore: "pid,hostname",
    ...(destination === undefined ? {} : { destination }),
  });
}
