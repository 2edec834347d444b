import { randomBytes } from "node:crypto";
import type { components } from "@payments/contract/types";
import type { Page, PageResult } from "../../store/port.ts";
import type { Caller } from "../kernel/caller.ts";
import type { Clock } from "../kernel/clock.ts";
import { commit } from "../kernel/commit.ts";
import { inEnvironment } from "../kernel/environment.ts";
import { DomainError } from "../kernel/errors.ts";
import { newId, randomBase62 } from "../kernel/ids.ts";
import { createdAt } from "../kernel/time.ts";
import type { ServiceKeyDoc } from "../service-keys/records.ts";
import { openSecret, sealSecret, type VaultKeys } from "../vault/crypto.ts";
import { parseVaultKeys } from "../vault/keys.ts";
import type { SandboxDoc, SandboxStore } from "./records.ts";

// Sandboxes on demand (spec/resources/sandboxes.tsp). This area keeps the account's list of sandboxes and
// their secrets of routing (key_tag) and encryption (vault_keys); a sandbox's own data lives in a store of
// its own, which the composition root opens and erases through the SandboxHost port below
// (server/src/sandboxes/host.ts). Isolation is structural: a sandbox's requests are served by a domain
// on its own store, so no query of one sandbox can reach another's records.

/** How many characters end every secret of a sandbox's keys and name its sandbox (SandboxDoc.key_tag). */
export const KEY_TAG_LENGTH = 8;

/** What a sandbox's store is opened with: its id, its keys' tag, its own vault keys, and its name. */
export interface SandboxIdentity {
  id: string;
  keyTag: string;
  /** IsolatedSandbox.name: the console shows it on a session in the sandbox. */
  name: string;
  vaultKeys: VaultKeys;
}

/**
 * The port the composition root implements (server/src/sandboxes/host.ts): it makes, opens and erases the
 * stores the sandboxes live in. Declared here, by its consumer.
 */
export interface SandboxHost {
  /** How many sandboxes one store may hold (SANDBOX_LIMIT). */
  readonly limit: number;
  /** Makes the sandbox's store and its first key (scope `*`), returning the key and its secret. */
  provision(sandbox: SandboxIdentity, keyName: string): Promise<{ key: ServiceKeyDoc; secret: string }>;
  /** Closes the sandbox's store wherever this process has it open and erases it. */
  erase(id: string): Promise<void>;
}

export type CreateSandboxInput = components["schemas"]["SandboxCreate"];

/** The sandboxes area's service (spec: Sandboxes). */
export interface Sandboxes {
  create(
    caller: Caller,
    input: CreateSandboxInput,
  ): Promise<{ sandbox: SandboxDoc; key: { key: ServiceKeyDoc; secret: string } }>;
  list(caller: Caller, page: Page): Promise<PageResult<SandboxDoc>>;
  get(caller: Caller, id: string): Promise<SandboxDoc>;
  /** Deletes the sandbox: its record (and with it its vault keys) first, then its store. */
  remove(caller: Caller, id: string): Promise<SandboxDoc>;
  /** The sandbox whose keys end with `tag`, opened with its vault keys, or null (key routing). */
  byTag(tag: string): Promise<SandboxIdentity | null>;
  /**
   * The sandbox `id`, opened with its vault keys, or null: the keyless pages of a sandbox's objects
   * (`/sandboxes/{id}/pay/…`, `/sandboxes/{id}/3ds/…`) are routed by the id in their path.
   */
  byId(id: string): Promise<SandboxIdentity | null>;
}

/** The context a sandbox's vault keys are sealed under, so a sealed copy on another record does not open. */
const sealContext = (id: string) => `sandbox:${id}`;

/**
 * `vaultKeys` are the account's, which seal each sandbox's own. `sandboxHost`: who makes the sandboxes'
 * stores (absent where nothing hosts sandboxes: tests of other areas); `sandbox`: set when this domain
 * serves one sandbox (its keys may not manage sandboxes).
 */
export function createSandboxes(
  { store, clock, vaultKeys }: { store: SandboxStore; clock: Clock; vaultKeys: VaultKeys },
  where: { sandboxHost?: SandboxHost | undefined; sandbox?: { id: string } | undefined },
): Sandboxes {
  const deps = { host: where.sandboxHost ?? null, inside: where.sandbox?.id ?? null };

  /** Sandboxes are the account's to manage: a key of a sandbox may not make or see its siblings. */
  function managing(): SandboxHost {
    if (deps.inside !== null) {
      throw new DomainError(
        "forbidden",
        `This key belongs to sandbox ${deps.inside}; sandboxes are created, listed and deleted with a '*' key of the account's default sandbox or of production.`,
      );
    }
    if (deps.host === null) throw new DomainError("forbidden", "This server does not host sandboxes.");
    return deps.host;
  }

  /** A sandbox is managed by the environment whose key created it; the other's keys get 404. */
  const load = async (caller: Caller, id: string): Promise<SandboxDoc> =>
    inEnvironment(await store.get("sandboxes", id), caller.livemode, "sandbox", id);

  function identityOf(doc: SandboxDoc): SandboxIdentity {
    // A cast: create() below seals exactly this shape, and parseVaultKeys checks each key.
    const keys = JSON.parse(openSecret(doc.vault_keys, sealContext(doc.id), vaultKeys)) as {
      masterKey: string;
      fingerprintKey: string;
    };
    return { id: doc.id, keyTag: doc.key_tag, name: doc.name, vaultKeys: parseVaultKeys(keys) };
  }

  return {
    async create(caller, input) {
      const host = managing();
      const id = newId("sbx");
      const material = {
        masterKey: randomBytes(32).toString("base64"),
        fingerprintKey: randomBytes(32).toString("base64"),
      };
      const identity: SandboxIdentity = {
        id,
        keyTag: randomBase62(KEY_TAG_LENGTH),
        name: input.name,
        vaultKeys: parseVaultKeys(material),
      };
      // The refusal over the limit comes before anything is made, and is checked again in the transaction
      // that claims the place (another request may have taken the last one meanwhile).
      await refuseOverLimit(store, host.limit);
      const doc: SandboxDoc = {
        id,
        livemode: caller.livemode,
        // The account's record, on the server's own clock (no sandbox clock moves it).
        created_at: createdAt(clock.real()),
        name: input.name,
        key_tag: identity.keyTag,
        vault_keys: sealSecret(JSON.stringify(material), sealContext(id), vaultKeys),
      };
      // The store and its first key first (outside the transaction: another store), then the record that
      // makes the sandbox reachable; a failure after provisioning erases what it made.
      const key = await host.provision(identity, input.name);
      try {
        return await commit(store, caller, async (tx) => {
          await refuseOverLimit(tx, host.limit);
          await tx.insert("sandboxes", doc);
          return { sandbox: doc, key };
        });
      } catch (err) {
        await host.erase(id);
        throw err;
      }
    },

    list: async (caller, page) => {
      managing();
      return store.list("sandboxes", { livemode: caller.livemode }, page);
    },

    get: async (caller, id) => {
      managing();
      return load(caller, id);
    },

    async remove(caller, id) {
      const host = managing();
      const doc = await load(caller, id);
      // The record goes first: with it the sandbox's vault keys (its cards can no longer be read from any
      // copy of its store) and the route of its keys (they answer 401 from now on).
      await store.delete("sandboxes", id);
      await host.erase(id);
      return doc;
    },

    async byTag(tag) {
      const doc = await store.findOne("sandboxes", { key_tag: tag });
      return doc ? identityOf(doc) : null;
    },

    async byId(id) {
      const doc = await store.get("sandboxes", id);
      return doc ? identityOf(doc) : null;
    },
  };
}

async function refuseOverLimit(store: Pick<SandboxStore, "findAll">, limit: number): Promise<void> {
  const existing = await store.findAll("sandboxes", {}, limit);
  if (existing.length >= limit) {
    throw new DomainError(
      "sandbox_limit_reached",
      `This server holds its limit of ${limit} sandboxes (SANDBOX_LIMIT); delete one (DELETE /v1/sandboxes/{id}) before creating another.`,
    );
  }
}
