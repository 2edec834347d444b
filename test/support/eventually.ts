import { vi } from "vitest";

// The one way the suites wait: for something that happens in the background (a webhook delivery, a
// request-log record, a count written to the store), by looking again until it is there, for at most a
// bound. Never for time to pass: a test that needs time to pass moves the server's clock (clock.ts).

/** `read()`'s value once `done` accepts it, read every 20 ms for at most `timeoutMs`; `what` names it in the error. */
export function eventually<T>(
  what: string,
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  return vi.waitFor(
    async () => {
      const value = await read();
      if (!done(value)) throw new Error(`gave up waiting for ${what}`);
      return value;
    },
    { timeout: timeoutMs, interval: 20 },
  );
}
