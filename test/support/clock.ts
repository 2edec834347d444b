// The server takes its clock as a dependency (startServer's `now`): every expiry, window, schedule and
// timestamp it computes reads it. A test that needs time to pass gives the server a TestClock and moves
// it, instead of sleeping until the wall clock gets there: nothing waits, and a busy machine cannot
// make the test late.

/** A clock that stands still until the test moves it. */
export class TestClock {
  private at: number;

  /** Starts at `start` (default: the current time, so timestamps and signatures look like today's). */
  constructor(start: Date | number = Date.now()) {
    this.at = typeof start === "number" ? start : start.getTime();
  }

  /**
   * A clock standing at the start of the next minute: every request a test makes falls in one window
   * of a per-minute rate limit, however long the test takes, and that window ends a minute or more
   * after the real time, which is what the limiter's Retry-After and RateLimit headers count down to.
   */
  static atNextMinute(): TestClock {
    return new TestClock((Math.floor(Date.now() / 60_000) + 1) * 60_000);
  }

  /** The clock's time, as the server reads it; pass this function as startTestServer's `now`. */
  readonly now = (): Date => new Date(this.at);

  /** Moves the clock forward by `ms` milliseconds. */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new Error(`a TestClock only moves forward (asked to move by ${ms} ms)`);
    this.at += ms;
  }

  /** The clock's time in milliseconds since the epoch. */
  get ms(): number {
    return this.at;
  }
}
