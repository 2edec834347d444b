import type { Now } from "./caller.ts";
import { createdAt, creationSeries } from "./time.ts";

// The clocks the domain reads. Each environment has its own time: production's is the server's own
// clock; the sandbox's runs ahead of it by the sandbox clock's offset, which grows with each advance and
// goes back to zero only at a reset (the sandbox clock operations, spec/resources/sandbox-clock.tsp;
// domain/sandbox-clock keeps the offset in the store, one per store). A reset starts a new *epoch*: what
// the sandbox made before it may carry times after the sandbox's now, so what follows records in the
// order they were made across a reset (the event stream, retention sweeps) also reads `resets()`. Everything a record of an environment says about time (created_at, expiries, due
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
  /**
   * When the environment's clock was reset to the server's, on the clock ids are stamped with (ms,
   * kernel/ids.ts idNow), oldest first (the
   * latest few; always none for production): what was made before a reset may carry later times than
   * what was made after it.
   */
  resets(livemode: boolean): readonly number[];
}

/** The sandbox clock's state as the store keeps it (domain/sandbox-clock/records.ts). */
export interface SandboxClockState {
  /** How many resets the clock has had: a reading of a later epoch replaces one of an earlier. */
  epoch: number;
  offsetMs: number;
  /** When the latest resets were made, on the clock ids are stamped with (ms, kernel/ids.ts idNow), oldest first. */
  resets: readonly number[];
}

/** A clock whose sandbox offset the sandbox-clock area sets. */
export interface SettableClock extends Clock {
  /** How far the sandbox runs ahead of the server's clock, in milliseconds (0 until first advanced). */
  offsetMs(): number;
  /** The sandbox clock's epoch (resets so far). */
  epoch(): number;
  /**
   * Sets the offset; a smaller one than the current is ignored, so within an epoch the sandbox's time
   * never goes back.
   */
  raiseOffset(ms: number): void;
  /**
   * Takes the store's state: a later epoch's whatever its offset (a reset), else only a larger offset, so
   * a reading that raced an advance of this instance never takes its time back.
   */
  adopt(state: SandboxClockState): void;
}

export function createClock(real: Now): SettableClock {
  let offset = 0;
  let epoch = 0;
  let resets: readonly number[] = [];
  // A new series at each reset: the old one would go on from the advanced time it last stamped.
  let sandboxSeries = creationSeries();
  const checked = (ms: number) => {
    if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError(`bad sandbox clock offset ${ms}`);
    return ms;
  };
  const raiseOffset = (ms: number) => {
    if (checked(ms) > offset) offset = ms;
  };
  const now = (livemode: boolean) => (livemode || offset === 0 ? real() : new Date(real().getTime() + offset));
  return {
    now,
    // While the offset is 0 both environments are on the server's clock, and share its series.
    createdAt: (livemode) => (livemode || offset === 0 ? createdAt(real()) : sandboxSeries(now(false))),
    real,
    resets: (livemode) => (livemode ? [] : resets),
    offsetMs: () => offset,
    epoch: () => epoch,
    raiseOffset,
    adopt(state) {
      if (state.epoch < epoch) return;
      if (state.epoch > epoch) {
        epoch = state.epoch;
        offset = checked(state.offsetMs);
        resets = [...state.resets];
        sandboxSeries = creationSeries();
        return;
      }
      raiseOffset(state.offsetMs);
    },
  };
}
