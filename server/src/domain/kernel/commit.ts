import type { AppStore, AppTx } from "../records.ts";
import type { Caller } from "./caller.ts";

// Atomic phases for Idempotency-Key (the contract's idempotency rules in spec/main.tsp): "the change
// happened" and "the key knows what happened" must be one fact. So every use case that changes state
// on behalf of a POST makes its writes through commit(), and when the request carries a key, the key's
// outcome (the answer to replay) is written by the caller's recorder inside that same transaction. A
// crash can then leave only two states: nothing committed (a retry runs the request again) or the change
// and its outcome committed together (a retry replays it). Never "changed, but the key does not know".

/** Writes a request's outcome inside the transaction that makes its change. Supplied by the HTTP layer. */
export interface OutcomeRecorder {
  /**
   * Called once per run of the transaction (MongoDB may run it again on a transient error) with what the
   * use case returns. Throws, rolling the change back, if this request no longer owns its key.
   */
  record(tx: AppTx, result: unknown): Promise<void>;
}

/**
 * Runs `fn` in one store transaction and, when the caller's request carries an Idempotency-Key, records
 * the outcome in the same transaction. Use it for every write a POST makes (a single insert included);
 * outside calls (the processor) stay before it, as the store's transaction may run more than once.
 */
export function commit<T>(store: AppStore, caller: Caller | null, fn: (tx: AppTx) => Promise<T>): Promise<T> {
  const recorder = caller?.outcome;
  if (!recorder) return store.transaction(fn);
  return store.transaction(async (tx) => {
    const result = await fn(tx);
    await recorder.record(tx, result);
    return result;
  });
}
