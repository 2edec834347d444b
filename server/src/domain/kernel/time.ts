// Timestamps are RFC 3339 UTC strings with microsecond precision (`2026-11-21T10:15:30.123000Z`).
// Stored as strings they sort lexicographically, which the store's list order and range queries rely
// on, so every stored timestamp uses this one format. (SQLite keeps created_at and the timestamps a
// collection declares as integers of microseconds, store/sqlite/time.ts: the same order, the same text back.)

/** A date in the stored format. */
export function iso(date: Date): string {
  return `${date.toISOString().slice(0, -1)}000Z`;
}

/**
 * A series of creation timestamps: `now` in the stored format, but strictly increasing within the series,
 * so objects created in the same millisecond still list newest first in the order they were made. The
 * nudge is one microsecond per collision: far below any clock's accuracy. Each clock keeps its own series
 * (the sandbox clock runs ahead of the server's: kernel/clock.ts), so one never drags the other forward.
 */
export function creationSeries(): (now: Date) => string {
  let lastMicros = 0;
  return (now) => {
    let micros = now.getTime() * 1000;
    if (micros <= lastMicros) micros = lastMicros + 1;
    lastMicros = micros;
    const ms = Math.floor(micros / 1000);
    return `${new Date(ms).toISOString().slice(0, -1)}${String(micros % 1000).padStart(3, "0")}Z`;
  };
}

/** A creation timestamp on the server's own clock (its one series in this process). */
export const createdAt: (now: Date) => string = creationSeries();
