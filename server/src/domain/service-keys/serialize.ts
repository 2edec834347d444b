import type { Schemas } from "../kernel/operations.ts";
import type { ServiceKeyDoc } from "./records.ts";

// Stored keys → the contract's ServiceKey: the prefix, never the secret or its digests.

export const serviceKey = (k: ServiceKeyDoc): Schemas["ServiceKey"] => ({
  id: k.id,
  object: "service_key",
  name: k.name,
  prefix: k.prefix,
  scopes: k.scopes,
  livemode: k.livemode,
  last_used_at: k.last_used_at,
  created_at: k.created_at,
  expires_at: k.expires_at,
  revoked_at: k.revoked_at,
});

/** Create and rotate answer with the secret, once (ServiceKeyWithSecret; never stored for replay). */
export const serviceKeyWithSecret = ({ key, secret }: { key: ServiceKeyDoc; secret: string }) => ({
  ...serviceKey(key),
  secret,
});
