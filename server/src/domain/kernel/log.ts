// What the domain logs through: pino's Logger fits it, and the domain depends on no logger library.
// Domain code logs only what no caller will hear of (a background step that failed after its request
// was answered); everything else is an error the caller gets.

export interface DomainLog {
  error(details: object, message: string): void;
  warn(details: object, message: string): void;
  /** What went as expected but an operator may want to see (an acquirer confirming our own reversal). */
  info?(details: object, message: string): void;
  /** An operator's trace (debug level: too many lines for `info`). */
  debug?(details: object, message: string): void;
}

/** Logs nothing: where no log is wired (unit tests). */
export const silentLog: DomainLog = { error: () => {}, warn: () => {} };
