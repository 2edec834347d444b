import type { Now } from "./caller.ts";
import { createdAt, creationSeries } from "./time.ts";

// The clocks the domain reads. Each environment has its own time: production's is the server's own
// clock; the sandbox's runs ahead of it by the sandbox clock's offset, which only grows (the sandbox
// clock operations, spec/resources/sandbox-clock.tsp; domain/sandbox-clock keeps the offset in the store,
// one per store). Everything a record of an environment says about time (created_at, expiries, due
// times, the jobs that act on them) is on that environment's clock, so a use case passes its caller's
// livemode and a job the livemode of the records it handles. What belongs to the real world whatever the
// environment reads `real`: a signature's timestamp (the receiver checks it against its own clock),
// credentials and sessions (service keys, console sessions, a hosted page's token, a webhook secret's
// rotation grace), Idempotency-Key and rate-limit windows, the request log.

export interface Clock {
  /** The environment's time now: the server's for production (true), the sandbox clock's for the sandbox. */
  now(livemode: boolean): Date;
  /** A creation timestamp on the environment's clock (strictly increasing within it, kernel/time.ts). */
  createdAt(livemode: boolean): string;
  /** The server's own time, whatever the environment. */
  real: Now;
}

/** A clock whose sandbox offset the sandbox-clock area sets. */
export interface SettableClock extends Clock {
  /** How far the sandbox runs ahead of the server's clock, in milliseconds (0 until first advanced). */
  offsetMs(): number;
  /** Sets the offset; a smaller one than the current is ignored, so the sandbox's time never goes back. */
  raiseOffset(ms: number): void;
}

export function createClock(real: Now): SettableClock {
  let offset = 0;
  const sandboxSeries = creationSeries();
  const now = (livemode: boolean) => (livemode || offset === 0 ? real() : new Date(real().getTime() + offset));
  return {
    now,
    // While the offset is 0 both environments are on the server's clock, and share its series.
    createdAt: (livemode) => (livemode || offset === 0 ? createdAt(real()) : sandboxSeries(now(false))),
    real,
    offsetMs: () => offset,
    raiseOffset(ms) {
      if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError(`bad sandbox clock offset ${ms}`);
      if (ms > offset) offset = ms;
    },
  };
}
