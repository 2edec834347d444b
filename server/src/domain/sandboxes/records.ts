import type { BaseDoc } from "../../store/port.ts";
import { collection } from "../kernel/records.ts";
import type { AreaStore } from "../kernel/store.ts";
import type { SealedSecret } from "../vault/crypto.ts";

// Sandboxes on demand (spec/resources/sandboxes.tsp). The account's store keeps one record per sandbox:
// what routes a key to it (key_tag) and its vault keys, sealed under the account's master key. Everything
// else of a sandbox lives in its own store (server/src/sandboxes/host.ts), so deleting this record
// destroys the only copy of the key that wraps the sandbox's vaulted cards (crypto-erase).

export interface SandboxDoc extends BaseDoc {
  name: string;
  /**
   * The last KEY_TAG_LENGTH characters of every secret of the sandbox's keys: how a request's key is
   * routed to its sandbox's store without the account's store knowing the sandbox's keys.
   */
  key_tag: string;
  /** The sandbox's vault master and fingerprint keys (JSON), sealed under the account's vault keys. */
  vault_keys: SealedSecret;
}

export const sandboxCollections = {
  sandboxes: collection<SandboxDoc>([{ fields: ["key_tag"], unique: true }, { fields: ["livemode"] }]),
};

/** The store as the sandboxes area sees it: its own collection and the kernel's (kernel/store.ts). */
export type SandboxStore = AreaStore<typeof sandboxCollections>;
