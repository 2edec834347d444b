/**
 * A start-up failure an operator fixes by changing one setting (a busy PORT, an unusable DATA_DIR, an
 * unreachable MONGODB_URI): `npm start` prints its message, one line naming the setting, instead of a
 * stack trace.
 */
export class StartupError extends Error {
  override name = "StartupError";
  constructor(
    readonly setting: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${setting}: ${reason}`.replace(/\s*\n\s*/g, " "), options);
  }
}

/** A system error's code (`EADDRINUSE`, `SQLITE_CANTOPEN`), which a StartupError's words are chosen by. */
export function codeOf(err: unknown): string | undefined {
  return err instanceof Error && "code" in err && typeof err.code === "string" ? err.code : undefined;
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
