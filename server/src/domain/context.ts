// What a use case knows about its caller: the authenticated key and its environment. Built by the
// HTTP layer from the Authorization header; the domain never sees the request itself.
export interface Caller {
  keyId: string;
  /** false: sandbox (key_test_…), true: production (key_live_…). Every read and write is confined to it (DESIGN §2). */
  livemode: boolean;
  scopes: string[];
  /** Leading part of the secret, safe to log. */
  keyPrefix: string;
  requestId: string;
}

export type Now = () => Date;
