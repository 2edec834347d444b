import type { components } from "@payments/contract/types";
import type { BaseDoc } from "../../store/port.ts";
import { collection } from "../kernel/records.ts";
import type { AreaDocs, AreaStore, AreaTx } from "../kernel/store.ts";

// Service keys (spec/resources/service-keys.tsp), stored by the SHA-256 digest of their secret, and the
// installation's one-off facts (the first start's key).

/** A scope the contract defines (Scope: `*`, `merchants`, `tokenization`, …). */
export type Scope = components["schemas"]["Scope"];

export interface ServiceKeyDoc extends BaseDoc {
  name: string;
  prefix: string;
  scopes: Scope[];
  /** hex SHA-256 of the current secret. */
  secret_hash: string;
  /** hex SHA-256 of the secret replaced by the last rotation, valid until previous_expires_at. */
  previous_secret_hash: string | null;
  previous_expires_at: string | null;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

/** One-off facts about the installation (e.g. "the bootstrap sandbox key was created"). */
export interface SettingDoc extends BaseDoc {
  value: string;
}

export const serviceKeyCollections = {
  service_keys: collection<ServiceKeyDoc>([
    { fields: ["secret_hash"], unique: true },
    { fields: ["previous_secret_hash"] },
    { fields: ["livemode"] },
  ]),
  settings: collection<SettingDoc>([]),
};

/** The store as the service-keys area sees it: its own collections and the kernel's (kernel/store.ts). */
export type ServiceKeyStore = AreaStore<typeof serviceKeyCollections>;
export type ServiceKeyTx = AreaTx<typeof serviceKeyCollections>;
export type ServiceKeyDocs = AreaDocs<typeof serviceKeyCollections>;
