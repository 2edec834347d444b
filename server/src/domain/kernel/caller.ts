import type { OutcomeRecorder } from "./commit.ts";

// What a use case knows about its caller: the authenticated key and its environment. Built by the
// HTTP layer from the Authorization header; the domain never sees the request itself.
export interface Caller {
  keyId: string;
  /** false: sandbox (key_test_…), true: production (key_live_…). Every read and write is confined to it. */
  livemode: boolean;
  scopes: string[];
  /** Leading part of the secret, safe to log. */
  keyPrefix: string;
  requestId: string;
  /**
   * Present when the request carries an Idempotency-Key: the use case's commit() writes the key's
   * outcome through it, in the transaction that makes the change (see commit.ts).
   */
  outcome?: OutcomeRecorder | undefined;
}

export type Now = () => Date;
