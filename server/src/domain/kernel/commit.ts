import type { BaseDoc, Store, TxOps } from "../../store/port.ts";
import { collection } from "./records.ts";

// Atomic phases for Idempotency-Key (the contract's idempotency rules in spec/main.tsp): "the change
// happened" and "the key knows what happened" must be one fact. So every use case that changes state
// on behalf of a POST makes its writes through commit(), and when the request carries a key, the key's
// outcome (the answer to replay) is written by the caller's recorder inside that same transaction. A
// crash can then leave only two states: nothing committed (a retry runs the request again) or the change
// and its outcome committed together (a retry replays it). Never "changed, but the key does not know".

/**
 * Stored under id `<test|live>:<SHA-256 of the Idempotency-Key>`: keys are scoped to the calling
 * environment and never stored in clear (server/src/http/idempotency.ts).
 */
export interface IdempotencyDoc extends BaseDoc {
  /** SHA-256 of method, path and body: a different request under the same key is a 422. */
  request_hash: string;
  state: "in_flight" | "done";
  /** The request id of the request that holds the key; a retry that takes over a dead one replaces it. */
  owner: string;
  /** For in-flight records: when a crashed first request stops blocking retries. */
  locked_until: string;
  status: number | null;
  headers: Record<string, string> | null;
  /** The response body exactly as first sent; null while in flight and when withheld. */
  body: string | null;
  /** The answer carried a secret or a card number, so it was not kept: a retry gets 409 naming `object_id`. */
  withheld: boolean;
  /** For withheld answers: the id of the object the request created or changed. */
  object_id: string | null;
  /** Whether the outcome was written in the same transaction as the change (true for every change). */
  atomic: boolean;
  expires_at: string;
}

export const idempotencyCollections = {
  // Read by key only, swept by expiry: unlisted, so no listing index (issue 36, bytes per charge); the
  // expiry an integer in its column and index (store/port.ts, CollectionSpec.timestamps).
  idempotency: collection<IdempotencyDoc>([{ fields: ["expires_at"] }], { unlisted: true, timestamps: ["expires_at"] }),
};

/** The transaction as an outcome recorder sees it: it writes the request's idempotency record. */
export type OutcomeTx = TxOps<{ idempotency: IdempotencyDoc }>;

/** Writes a request's outcome inside the transaction that makes its change. Supplied by the HTTP layer. */
export interface OutcomeRecorder {
  /**
   * The request's key as stored (`<env>:<SHA-256>`, never the key in clear): a use case that sends a call
   * to the acquirer notes it on its intent, so a retry with the same key resumes that intent
   * (domain/charges/intents.ts) instead of starting a new one.
   */
  key?: string;
  /**
   * Called once per run of the transaction (MongoDB may run it again on a transient error) with what the
   * use case returns. Throws, rolling the change back, if this request no longer owns its key.
   */
  record(tx: OutcomeTx, result: unknown): Promise<void>;
}

/** The answer a handler gives, as a recorder stores it. */
export interface StoredReply {
  status: number;
  body: unknown;
}

/** What a request that carries an Idempotency-Key gives its handler (http/idempotency.ts makes it). */
export interface IdempotencyScope {
  /** A recorder that stores `toReply(result)` as this request's answer inside the use case's transaction. */
  recorder(toReply: (result: unknown) => StoredReply): OutcomeRecorder;
}

/**
 * Runs `fn` in one store transaction and, when the caller's request carries an Idempotency-Key (its
 * `outcome`), records the outcome in the same transaction. Use it for every write a POST makes (a single
 * insert included); outside calls (the processor) stay before it, as the store's transaction may run
 * more than once. `caller` is null for jobs, which act for nobody.
 */
export function commit<D extends { idempotency: IdempotencyDoc } & Record<string, BaseDoc>, T>(
  store: Store<D>,
  caller: { outcome?: OutcomeRecorder | undefined } | null,
  fn: (tx: TxOps<D>) => Promise<T>,
): Promise<T> {
  const recorder = caller?.outcome;
  if (!recorder) return store.transaction(fn);
  return store.transaction(async (tx) => {
    const result = await fn(tx);
    await recorder.record(tx, result);
    return result;
  });
}
