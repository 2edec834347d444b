import type { BaseDoc, CollectionSpecs, Store, StoreOps } from "../store/port.ts";

// The persisted shape of every object, one collection each. API objects are serialized from these
// (server/src/http/serialize.ts); secrets and card data never leave through the API except by the
// vault's audited reveal.

export interface MerchantDoc extends BaseDoc {
  name: string;
  status: "active" | "suspended" | "closed";
  metadata: Record<string, string>;
  updated_at: string;
}

/** The encrypted card number (DESIGN §6): AES-256-GCM under a per-token data key, itself wrapped by the master key. */
export interface SealedCard {
  /** Which master key wrapped the data key (for rotation of the master key). */
  kek_id: string;
  /** base64: nonce(12) | ciphertext | tag(16) of the data key under the master key. */
  wrapped_dek: string;
  /** base64: nonce(12) | ciphertext | tag(16) of the card number under the data key; AAD = token id. */
  sealed_pan: string;
}

export interface TokenDoc extends BaseDoc {
  holder: string;
  brand: string;
  first4: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  fingerprint: string;
  /** null once deleted: the data key and ciphertext are erased (crypto-shredding). */
  sealed: SealedCard | null;
  deleted_at: string | null;
}

export interface ServiceKeyDoc extends BaseDoc {
  name: string;
  prefix: string;
  scopes: string[];
  /** hex SHA-256 of the current secret. */
  secret_hash: string;
  /** hex SHA-256 of the secret replaced by the last rotation, valid until previous_expires_at. */
  previous_secret_hash: string | null;
  previous_expires_at: string | null;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

export interface EventDoc extends BaseDoc {
  type: string;
  /** The type's own fields (tx_id, score, ...); the API flattens them beside the envelope. */
  payload: Record<string, unknown>;
}

/** Stored under id `<livemode>:<Idempotency-Key>`: keys are scoped to the calling environment (DESIGN §4). */
export interface IdempotencyDoc extends BaseDoc {
  /** SHA-256 of method, path and body: a different request under the same key is a 422. */
  request_hash: string;
  state: "in_flight" | "done";
  /** For in-flight records: when a crashed first request stops blocking retries. */
  locked_until: string;
  status: number | null;
  headers: Record<string, string> | null;
  /** The response body exactly as first sent. */
  body: string | null;
  expires_at: string;
}

/** Who revealed which card, when (DESIGN §6). */
export interface AuditDoc extends BaseDoc {
  action: "token.reveal";
  object_id: string;
  key_id: string;
  request_id: string;
}

/** One line of the request log the console shows (DESIGN §12); card numbers are masked before writing. */
export interface RequestLogDoc extends BaseDoc {
  request_id: string;
  method: string;
  path: string;
  status: number;
  latency_ms: number;
  key_prefix: string | null;
}

/** One-off facts about the installation (e.g. "the bootstrap sandbox key was created"). */
export interface SettingDoc extends BaseDoc {
  value: string;
}

export type Docs = {
  merchants: MerchantDoc;
  tokens: TokenDoc;
  service_keys: ServiceKeyDoc;
  events: EventDoc;
  idempotency: IdempotencyDoc;
  audit_log: AuditDoc;
  request_log: RequestLogDoc;
  settings: SettingDoc;
};

export type AppStore = Store<Docs>;
export type AppTx = StoreOps<Docs>;

export const COLLECTIONS: CollectionSpecs<Docs> = {
  merchants: { indexes: [{ fields: ["livemode", "status"] }] },
  tokens: { indexes: [{ fields: ["livemode", "fingerprint"] }] },
  service_keys: {
    indexes: [
      { fields: ["secret_hash"], unique: true },
      { fields: ["previous_secret_hash"] },
      { fields: ["livemode"] },
    ],
  },
  events: { indexes: [{ fields: ["livemode", "type"] }] },
  idempotency: { indexes: [{ fields: ["expires_at"] }] },
  audit_log: { indexes: [{ fields: ["object_id"] }] },
  request_log: { indexes: [{ fields: ["livemode"] }] },
  settings: { indexes: [] },
};
