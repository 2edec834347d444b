import { createHash } from "node:crypto";
import { DuplicateKeyError } from "../../store/port.ts";
import { iso } from "../kernel/time.ts";
import type { FraudCounterDoc, FraudStore, FraudTx } from "./records.ts";
import { LIMITS, type WindowCounts } from "./rules.ts";

// Velocity counters (velocity_card, velocity_ip, card_testing) live in the store, so several
// instances on one store count the same attempts.
//
// Why one document per (environment, card or IP, minute) with atomic increments: counting recent
// charges through an index would need a count query the store port does not have (and a scan per
// charge as traffic grows), while a bucket document costs one conditional increment per attempt and
// one read of at most ten small documents per evaluation, whatever the traffic. The window is the
// current minute and the nine before it (between 9 and 10 minutes of history): a sliding window
// to the minute, which is as fine as velocity rules need.
//
// The attempt is counted *before* the rules read the counts, by an atomic increment outside the
// charge's transaction: concurrent attempts (what card testers send) each see a distinct count, so a
// burst cannot slip under the limit by racing. An attempt whose request then fails still counted,
// which is what an attempt is. Declines are counted inside the charge's transaction, with the
// decline. Values are stored only as a SHA-256 digest; a sweep deletes minutes that have left every
// window.

export type CounterKind = "card" | "ip";

const BUCKET_SECONDS = 60;
const BUCKETS = LIMITS.windowSeconds / BUCKET_SECONDS;

function minuteOf(at: Date): number {
  return Math.floor(at.getTime() / (BUCKET_SECONDS * 1000));
}

export function counterId(livemode: boolean, kind: CounterKind, value: string, minute: number): string {
  return `${counterPrefix(livemode, kind, value)}${minute}`;
}

/** A bucket id without its minute: the value's digest is taken once for the window's ten ids. */
function counterPrefix(livemode: boolean, kind: CounterKind, value: string): string {
  const digest = createHash("sha256").update(value).digest("hex").slice(0, 32);
  return `${livemode ? "live" : "test"}:${kind}:${digest}:`;
}

function sum(docs: FraudCounterDoc[]): WindowCounts {
  const out = { attempts: 0, small: 0, declines: 0 };
  for (const d of docs) {
    out.attempts += d.attempts;
    out.small += d.small;
    out.declines += d.declines;
  }
  return out;
}

/**
 * Deletes an environment's buckets of minutes after `at` (inside the sandbox clock's reset, which takes
 * the sandbox's time back: domain/sandbox-clock): they would count again when the clock reaches them.
 */
export async function forgetCountersAfter(tx: FraudTx, livemode: boolean, at: Date): Promise<number> {
  const lastKept = (minuteOf(at) + BUCKETS + 1) * BUCKET_SECONDS * 1000;
  return tx.deleteMany("fraud_counters", { livemode, expires_at: { $gt: iso(new Date(lastKept)) } });
}

export function createCounters(store: FraudStore): Counters {
  /** The ids of the window's buckets, newest first. */
  function windowIds(livemode: boolean, kind: CounterKind, value: string, at: Date): [string, ...string[]] {
    const minute = minuteOf(at);
    const prefix = counterPrefix(livemode, kind, value);
    // The current minute's first, typed so: count() adds to it.
    return [`${prefix}${minute}`, ...Array.from({ length: BUCKETS - 1 }, (_, i) => `${prefix}${minute - 1 - i}`)];
  }

  return {
    /**
     * Counts an attempt in the current minute (atomically, see above) and returns the window's counts,
     * this attempt included, with the id of the bucket it went into (for a later decline).
     */
    async count(
      livemode: boolean,
      kind: CounterKind,
      value: string,
      small: boolean,
      at: Date,
    ): Promise<{ counts: WindowCounts; bucketId: string }> {
      const ids = windowIds(livemode, kind, value, at);
      const [bucketId] = ids;
      const inc = { attempts: 1, small: small ? 1 : 0 };
      if (!(await store.update("fraud_counters", bucketId, { inc }))) {
        try {
          await store.insert("fraud_counters", {
            id: bucketId,
            livemode,
            // Counters are never listed, so no creation series: the minute they count is enough.
            created_at: iso(at),
            ...inc,
            declines: 0,
            expires_at: iso(new Date((minuteOf(at) + BUCKETS + 1) * BUCKET_SECONDS * 1000)),
          });
        } catch (err) {
          // Another instance made the bucket first: add to it.
          if (!(err instanceof DuplicateKeyError)) throw err;
          await store.update("fraud_counters", bucketId, { inc });
        }
      }
      const docs = await store.findAll("fraud_counters", { id: { $in: ids } }, BUCKETS);
      return { counts: sum(docs), bucketId };
    },

    /** The window's counts without counting anything (evaluations through the API). */
    async read(livemode: boolean, kind: CounterKind, value: string, at: Date): Promise<WindowCounts> {
      const ids = windowIds(livemode, kind, value, at);
      return sum(await store.findAll("fraud_counters", { id: { $in: ids } }, BUCKETS));
    },

    /** Counts a decline in the bucket its attempt went into, inside the charge's transaction. */
    async decline(tx: FraudTx, bucketId: string): Promise<void> {
      await tx.update("fraud_counters", bucketId, { inc: { declines: 1 } });
    },

    /** Deletes buckets that have left every window. */
    sweep: (livemode: boolean, at: Date) =>
      store.deleteMany("fraud_counters", { livemode, expires_at: { $lt: iso(at) } }),
  };
}

/** The velocity counters the rules read (fraud_counters). */
export interface Counters {
  /**
   * Counts an attempt in the current minute (atomically, see above) and returns the window's counts,
   * this attempt included, with the id of the bucket it went into (for a later decline).
   */
  count(
    livemode: boolean,
    kind: CounterKind,
    value: string,
    small: boolean,
    at: Date,
  ): Promise<{
    counts: WindowCounts;
    bucketId: string;
  }>;
  /** The window's counts without counting anything (evaluations through the API). */
  read(livemode: boolean, kind: CounterKind, value: string, at: Date): Promise<WindowCounts>;
  /** Counts a decline in the bucket its attempt went into, inside the charge's transaction. */
  decline(tx: FraudTx, bucketId: string): Promise<void>;
  /** Deletes buckets that have left every window. */
  sweep: (livemode: boolean, at: Date) => Promise<number>;
}
