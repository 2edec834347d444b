import { createHash } from "node:crypto";
import type { components } from "@payments/contract/types";
import { DuplicateKeyError, type Page, type PageResult } from "../../store/port.ts";
import type { Caller } from "../kernel/caller.ts";
import type { Clock } from "../kernel/clock.ts";
import { commit } from "../kernel/commit.ts";
import { inEnvironment } from "../kernel/environment.ts";
import { DomainError, invalid } from "../kernel/errors.ts";
import { recordEvent } from "../kernel/events.ts";
import { newId, randomBase62 } from "../kernel/ids.ts";
import { createdAt, iso } from "../kernel/time.ts";
import type { ServiceKeyDoc, ServiceKeyStore } from "./records.ts";

// Service keys (spec/resources/service-keys.tsp). Secrets are `key_test_` / `key_live_` + 32 base62
// characters, stored only as SHA-256 digests and looked up by digest, so the comparison is on fixed-length
// values and a leaked database does not leak usable keys.

export const SECRET_RANDOM_LENGTH = 32;
const PREFIX_RANDOM_LENGTH = 4;
/** last_used_at is written at most this often per key (ServiceKey.last_used_at may lag up to a minute). */
const LAST_USED_RESOLUTION_MS = 60_000;
/** How long a key record found by authenticate is reused without reading the store (see byDigest). */
export const AUTH_CACHE_TTL_MS = 1_000;
/** Bound on the records kept; the oldest goes first. */
const AUTH_CACHE_MAX_KEYS = 10_000;
export const hashSecret = (secret: string) => createHash("sha256").update(secret).digest("hex");

/**
 * A new secret. A sandbox on demand's keys end with its tag (`tag`, domain/sandboxes: how a request is
 * routed to the sandbox's store); the account's keys are random throughout.
 */
function newSecret(livemode: boolean, tag = ""): string {
  return `key_${livemode ? "live" : "test"}_${randomBase62(SECRET_RANDOM_LENGTH - tag.length)}${tag}`;
}

/** The part of a secret shown to people (ServiceKey.prefix): `key_test_` and its first random characters. */
export const prefixOf = (secret: string) => secret.slice(0, "key_test_".length + PREFIX_RANDOM_LENGTH);

const SECRET_SHAPE = /^key_(test|live)_[0-9A-Za-z]{32}$/;

/**
 * Whether a presented secret has the shape of a service key's (`key_test_` or `key_live_`, then 32
 * base62 characters): the one rule about a key that needs no store, shared with the sandbox mock's
 * front (http/front.ts), which cannot know whether a key exists.
 */
export const isWellFormedSecret = (secret: string): boolean => SECRET_SHAPE.test(secret);

/** The `settings` record whose unique id the first start claims along with the bootstrap key. */
export const BOOTSTRAP_SETTING = "bootstrap_sandbox_key";

/** createServiceKey's body (the contract's ServiceKeyCreate). */
export type CreateKeyInput = components["schemas"]["ServiceKeyCreate"];

/** What service_key.* events tell about a key: never its secret or digests (events/service-keys.tsp). */
function keyEventFields(key: ServiceKeyDoc) {
  return { key_id: key.id, name: key.name, prefix: key.prefix, scopes: key.scopes };
}

/** `keyTag`: the tag every secret ends with, in a sandbox on demand (domain/sandboxes); none elsewhere. */
export function createServiceKeys(store: ServiceKeyStore, clock: Clock, keyTag = ""): ServiceKeys {
  // A key is a real credential: its creation, expiry, grace period and use are on the server's own clock,
  // whatever its environment; only the events it records are on its environment's (kernel/clock.ts).
  const now = clock.real;
  /** A new key record and its secret, not yet stored. */
  function build(livemode: boolean, input: CreateKeyInput): { key: ServiceKeyDoc; secret: string } {
    const scopes = [...new Set(input.scopes)];
    const at = now();
    if (input.expires_at !== undefined && Date.parse(input.expires_at) <= at.getTime()) {
      throw invalid("expires_at", "must be in the future");
    }
    const secret = newSecret(livemode, keyTag);
    const key: ServiceKeyDoc = {
      id: newId("kid"),
      livemode,
      created_at: createdAt(at),
      name: input.name,
      prefix: prefixOf(secret),
      scopes,
      secret_hash: hashSecret(secret),
      previous_secret_hash: null,
      previous_expires_at: null,
      last_used_at: null,
      expires_at: input.expires_at ? iso(new Date(input.expires_at)) : null,
      revoked_at: null,
    };
    return { key, secret };
  }

  async function none(): Promise<boolean> {
    return (await store.findAll("service_keys", {}, 1)).length === 0;
  }

  /** `caller` is null for the CLI, which acts without one. */
  async function issue(
    livemode: boolean,
    input: CreateKeyInput,
    caller: Caller | null = null,
  ): Promise<{ key: ServiceKeyDoc; secret: string }> {
    const built = build(livemode, input);
    return commit(store, caller, async (tx) => {
      await tx.insert("service_keys", built.key);
      await recordEvent(tx, clock, built.key.livemode, "service_key.created", keyEventFields(built.key));
      return built;
    });
  }

  // Authentication reads one or two records per request; a record found is reused for
  // AUTH_CACHE_TTL_MS. rotate() and revoke() drop it at once in this process, so here they take effect
  // on the next request. Another instance (or the CLI, another process) keeps using its copy for up to
  // AUTH_CACHE_TTL_MS after a rotation or revocation made elsewhere: the price of not reading the store
  // on every request. Expiry (expires_at, a grace period's end) is checked against the clock on every
  // request, cached or not. Keyed by digest, so no secret is kept; unknown secrets are never cached.
  const recent = new Map<string, { key: ServiceKeyDoc; until: number }>();
  /** Lookups under way, so concurrent requests with the same secret share one (and one record). */
  const pending = new Map<string, Promise<ServiceKeyDoc | null>>();
  /** Bumped by every rotation or revocation, so a lookup that raced one is not cached. */
  let generation = 0;

  function forget(id: string): void {
    generation++;
    pending.clear();
    for (const [digest, entry] of recent) if (entry.key.id === id) recent.delete(digest);
  }

  async function lookup(digest: string): Promise<ServiceKeyDoc | null> {
    const started = generation;
    const key =
      (await store.findOne("service_keys", { secret_hash: digest })) ??
      (await store.findOne("service_keys", { previous_secret_hash: digest }));
    if (key !== null && generation === started) {
      if (recent.size >= AUTH_CACHE_MAX_KEYS) {
        const oldest = recent.keys().next().value;
        if (oldest !== undefined) recent.delete(oldest);
      }
      recent.set(digest, { key, until: performance.now() + AUTH_CACHE_TTL_MS });
    }
    return key;
  }

  function byDigest(digest: string): Promise<ServiceKeyDoc | null> {
    const hit = recent.get(digest);
    if (hit !== undefined && hit.until > performance.now()) return Promise.resolve(hit.key);
    recent.delete(digest);
    let found = pending.get(digest);
    if (found === undefined) {
      found = lookup(digest).finally(() => {
        if (pending.get(digest) === found) pending.delete(digest);
      });
      pending.set(digest, found);
    }
    return found;
  }

  async function load(livemode: boolean, id: string): Promise<ServiceKeyDoc> {
    return inEnvironment(await store.get("service_keys", id), livemode, "service key", id);
  }

  return {
    /**
     * The key record `id` in whatever state it is (expired, revoked), or null: for a console session,
     * which re-checks its key at every request (console-sessions keyRefusal).
     */
    find: (id: string): Promise<ServiceKeyDoc | null> => store.get("service_keys", id),

    /**
     * Resolves a presented secret to its key. 401 for a malformed, unknown, expired or revoked key, and
     * for a rotated-out secret whose grace period has ended.
     */
    async authenticate(secret: string): Promise<ServiceKeyDoc> {
      const unauthorized = (why: string) => new DomainError("unauthorized", why);
      if (!isWellFormedSecret(secret)) throw unauthorized("The service key is malformed.");
      const digest = hashSecret(secret);
      const at = now();
      const key = await byDigest(digest);
      // Every check below runs on every request, cached record or not: only the lookup is reused.
      if (key?.secret_hash !== digest) {
        if (!key?.previous_expires_at || Date.parse(key.previous_expires_at) <= at.getTime()) {
          throw unauthorized("The service key is unknown, or was rotated and its grace period has ended.");
        }
      }
      if (key.revoked_at) throw unauthorized("The service key was revoked.");
      if (key.expires_at && Date.parse(key.expires_at) <= at.getTime()) throw unauthorized("The service key expired.");
      // The secret's own prefix says which environment it is for; a mismatch means a corrupted record.
      if (secret.startsWith("key_live_") !== key.livemode) throw unauthorized("The service key is unknown.");
      return key;
    },

    /** Records use without writing on every request. Failures here must never fail the request. */
    async touch(key: ServiceKeyDoc): Promise<void> {
      const at = now();
      if (key.last_used_at && at.getTime() - Date.parse(key.last_used_at) < LAST_USED_RESOLUTION_MS) return;
      // Noted on the record authenticate returned (the one every request with this secret shares until
      // the cache entry ends) before the write, so the requests that follow do not write it again.
      key.last_used_at = iso(at);
      await store.update("service_keys", key.id, { set: { last_used_at: key.last_used_at } });
    },

    create: (caller: Caller, input: CreateKeyInput) => issue(caller.livemode, input, caller),

    /** For the CLI and the first start, which act without a caller. */
    issue,

    get: (caller: Caller, id: string) => load(caller.livemode, id),

    list: (caller: Caller, page: Page): Promise<PageResult<ServiceKeyDoc>> =>
      store.list("service_keys", { livemode: caller.livemode }, page),

    async rotate(caller: Caller, id: string, gracePeriodSeconds: number) {
      const key = await load(caller.livemode, id);
      const at = now();
      if (key.revoked_at) throw new DomainError("invalid_state_transition", "A revoked key cannot be rotated.");
      if (key.expires_at && Date.parse(key.expires_at) <= at.getTime()) {
        throw new DomainError("invalid_state_transition", "An expired key cannot be rotated.");
      }
      const secret = newSecret(key.livemode, keyTag);
      // Conditional on the current digest, so two concurrent rotations cannot both keep "their" old secret.
      const updated = await commit(store, caller, async (tx) => {
        const rotated = await tx.update(
          "service_keys",
          id,
          {
            set: {
              secret_hash: hashSecret(secret),
              prefix: prefixOf(secret),
              previous_secret_hash: gracePeriodSeconds > 0 ? key.secret_hash : null,
              previous_expires_at:
                gracePeriodSeconds > 0 ? iso(new Date(at.getTime() + gracePeriodSeconds * 1000)) : null,
            },
          },
          { secret_hash: key.secret_hash, revoked_at: null },
        );
        if (!rotated) throw new DomainError("conflict", "The key changed while it was being rotated; retry.");
        await recordEvent(tx, clock, rotated.livemode, "service_key.rotated", {
          ...keyEventFields(rotated),
          previous_expires_at: rotated.previous_expires_at,
        });
        return { key: rotated, secret };
      }).finally(() => forget(id));
      return updated;
    },

    async revoke(caller: Caller, id: string): Promise<ServiceKeyDoc> {
      await load(caller.livemode, id);
      const updated = await commit(store, caller, async (tx) => {
        const revoked = await tx.update(
          "service_keys",
          id,
          { set: { revoked_at: iso(now()), previous_secret_hash: null, previous_expires_at: null } },
          { revoked_at: null },
        );
        if (revoked) {
          await recordEvent(tx, clock, revoked.livemode, "service_key.revoked", keyEventFields(revoked));
          return revoked;
        }
        // Revoked already, or concurrently: answer with the key as it now is (revoking twice is a no-op).
        return tx.get("service_keys", id);
      }).finally(() => forget(id));
      return updated ?? load(caller.livemode, id);
    },

    /** True when no key exists at all: the first start creates the sandbox key (README 'Quick start'). */
    none,

    /**
     * The first start's sandbox key with scope `*` (README "Quick start"), or null when this store already has a
     * key or another instance made the first one. Two instances starting together on an empty store
     * both see no key; each then claims the `settings` record BOOTSTRAP_SETTING in the same
     * transaction as its key, and the record's unique id lets exactly one of them commit.
     */
    async bootstrap(): Promise<{ key: ServiceKeyDoc; secret: string } | null> {
      if (!(await none())) return null;
      const built = build(false, { name: "sandbox (created on first start)", scopes: ["*"] });
      try {
        await store.transaction(async (tx) => {
          await tx.insert("settings", {
            id: BOOTSTRAP_SETTING,
            livemode: false,
            created_at: built.key.created_at,
            value: built.key.id,
          });
          await tx.insert("service_keys", built.key);
          await recordEvent(tx, clock, built.key.livemode, "service_key.created", keyEventFields(built.key));
        });
      } catch (err) {
        if (err instanceof DuplicateKeyError && err.collection === "settings") return null;
        throw err;
      }
      return built;
    },
  };
}

/** The service keys area's service (spec: ServiceKeys): keys, their secrets, and authentication. */
export interface ServiceKeys {
  /**
   * The key record `id` in whatever state it is (expired, revoked), or null: for a console session,
   * which re-checks its key at every request (console-sessions keyRefusal).
   */
  find: (id: string) => Promise<ServiceKeyDoc | null>;
  /**
   * Resolves a presented secret to its key. 401 for a malformed, unknown, expired or revoked key, and
   * for a rotated-out secret whose grace period has ended.
   */
  authenticate(secret: string): Promise<ServiceKeyDoc>;
  /** Records use without writing on every request. Failures here must never fail the request. */
  touch(key: ServiceKeyDoc): Promise<void>;
  create: (
    caller: Caller,
    input: CreateKeyInput,
  ) => Promise<{
    key: ServiceKeyDoc;
    secret: string;
  }>;
  /** For the CLI and the first start, which act without a caller. */
  issue: (
    livemode: boolean,
    input: CreateKeyInput,
    caller?: Caller | null,
  ) => Promise<{
    key: ServiceKeyDoc;
    secret: string;
  }>;
  get: (caller: Caller, id: string) => Promise<ServiceKeyDoc>;
  list: (caller: Caller, page: Page) => Promise<PageResult<ServiceKeyDoc>>;
  rotate(
    caller: Caller,
    id: string,
    gracePeriodSeconds: number,
  ): Promise<{
    key: ServiceKeyDoc;
    secret: string;
  }>;
  revoke(caller: Caller, id: string): Promise<ServiceKeyDoc>;
  /** True when no key exists at all: the first start creates the sandbox key (README 'Quick start'). */
  none: () => Promise<boolean>;
  /**
   * The first start's sandbox key with scope `*` (README "Quick start"), or null when this store already has a
   * key or another instance made the first one. Two instances starting together on an empty store
   * both see no key; each then claims the `settings` record BOOTSTRAP_SETTING in the same
   * transaction as its key, and the record's unique id lets exactly one of them commit.
   */
  bootstrap(): Promise<{
    key: ServiceKeyDoc;
    secret: string;
  } | null>;
}
