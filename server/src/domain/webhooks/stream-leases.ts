import { DuplicateKeyError } from "../../store/port.ts";
import type { Now } from "../kernel/caller.ts";
import { randomBase62 } from "../kernel/ids.ts";
import { iso } from "../kernel/time.ts";
import type { WebhookStore } from "./records.ts";

// How many event streams (GET /v1/events/stream, streamEvents in spec/resources/events.tsp) a key holds
// open at once, counted in the store, so the cap (EVENT_STREAMS_PER_KEY) holds across the workers of a
// cluster and every instance on the store, not per process (issue 35: two workers let a key hold 2N).
//
// Why slots: a key has N lease documents at most, ids `<key id>:<slot>`, slot 0 to N-1. Opening a stream
// takes a free slot: it inserts the slot's document (a unique id, so two instances never both get one),
// or takes over one whose lease has ended with a conditional update (only one of two racing takes it).
// That is exact on SQLite and MongoDB alike with the store port's own guarantees, where counting the
// open streams and then inserting would let two concurrent openings both see room. An open stream
// renews its lease (LEASE_MS) every RENEW_MS; a stream whose instance died frees its slot when the lease
// ends; a stream that finds its lease taken (its instance stalled past LEASE_MS) ends, and its client
// reconnects. Times are the server's own clock (a credential's matter, kernel/clock.ts).

/** How long a stream's slot is held without a renewal: an instance that dies frees its slots this long after. */
export const LEASE_MS = 30_000;
/** How often an open stream renews its slot: three renewals a lease, so one slow store write loses none. */
export const RENEW_MS = 10_000;

export interface StreamLease {
  /** Extends the lease; false when it was lost (taken over after it ended): the stream should end. */
  renew(): Promise<boolean>;
  /** Gives the slot back. */
  release(): Promise<void>;
}

export function createStreamLeases(deps: { store: WebhookStore; now: Now; leaseMs?: number }): StreamLeases {
  const { store, now } = deps;
  const leaseMs = deps.leaseMs ?? LEASE_MS;
  const until = () => iso(new Date(now().getTime() + leaseMs));

  /** The lease of slot `id`, held by `holder`. */
  function lease(id: string, holder: string): StreamLease {
    return {
      renew: async () =>
        (await store.update("stream_leases", id, { set: { expires_at: until() } }, { holder })) !== null,
      async release() {
        await store.deleteMany("stream_leases", { id, holder });
      },
    };
  }

  /** Takes the slot `id` if it is free (no document, or its lease has ended); null if it is held. */
  async function take(id: string, keyId: string, livemode: boolean, holder: string): Promise<StreamLease | null> {
    const at = now();
    try {
      await store.insert("stream_leases", {
        id,
        livemode,
        created_at: iso(at),
        key_id: keyId,
        holder,
        expires_at: until(),
      });
      return lease(id, holder);
    } catch (err) {
      if (!(err instanceof DuplicateKeyError)) throw err;
    }
    const held = await store.get("stream_leases", id);
    if (held === null) return null; // released meanwhile: the next opening takes it
    if (held.expires_at > iso(at)) return null;
    const taken = await store.update(
      "stream_leases",
      id,
      { set: { holder, expires_at: until() } },
      { holder: held.holder, expires_at: held.expires_at },
    );
    return taken ? lease(id, holder) : null;
  }

  return {
    /** A slot among the key's `perKey`, or null when every one is held (the caller answers 429). */
    async acquire(keyId: string, livemode: boolean, perKey: number): Promise<StreamLease | null> {
      const holder = randomBase62(16);
      for (let slot = 0; slot < perKey; slot++) {
        const got = await take(`${keyId}:${slot}`, keyId, livemode, holder);
        if (got) return got;
      }
      return null;
    },

    /** The key's slots whose lease has not ended (for tests and diagnostics). */
    async heldFor(keyId: string): Promise<number> {
      return (await store.findAll("stream_leases", { key_id: keyId, expires_at: { $gt: iso(now()) } })).length;
    },

    /** Deletes the slots whose lease ended (an instance died holding them); the housekeeping sweep runs it. */
    sweep: () => store.deleteMany("stream_leases", { expires_at: { $lt: iso(new Date(now().getTime() - leaseMs)) } }),
  };
}

/** The open event streams' slots, counted per key (EVENT_STREAMS_PER_KEY). */
export interface StreamLeases {
  /** A slot among the key's `perKey`, or null when every one is held (the caller answers 429). */
  acquire(keyId: string, livemode: boolean, perKey: number): Promise<StreamLease | null>;
  /** The key's slots whose lease has not ended (for tests and diagnostics). */
  heldFor(keyId: string): Promise<number>;
  /** Deletes the slots whose lease ended (an instance died holding them); the housekeeping sweep runs it. */
  sweep: () => Promise<number>;
}
