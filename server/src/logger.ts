import { type DestinationStream, type Logger, pino } from "pino";
import { maskCardNumbers } from "./domain/mask.ts";

/**
 * Structured JSON lines. Every line passes through maskCardNumbers before it is written, so a card
 * number that reaches a log by any path (a URL, an error message, a stack) shows only its first four
 * and last four digits (seed §2). Bodies are never logged, so a CVC never is.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    hooks: { streamWrite: (line: string) => maskCardNumbers(line) },
  };
  return destination ? pino(options, destination) : pino(options);
}
