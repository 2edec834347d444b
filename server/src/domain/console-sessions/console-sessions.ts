import { createHash } from "node:crypto";
import type { Now } from "../kernel/caller.ts";
import { randomBase62 } from "../kernel/ids.ts";
import { createdAt, iso } from "../kernel/time.ts";
import type { ServiceKeyDoc } from "../service-keys/records.ts";
import { hashSecret, type ServiceKeys } from "../service-keys/service-keys.ts";
import type { ConsoleSessionDoc, ConsoleSessionStore } from "./records.ts";

// Sessions of the developer console (docs/console.md "The console"). A key holder signs in by pasting a service
// key; the browser then holds only a random session token in an HttpOnly cookie, never the key. The
// store keeps, under the SHA-256 digest of that token, the key's id and the digest of the secret that
// signed in (the digest service_keys already holds), so neither the token nor the key is stored in
// clear, and every instance on the store shares the sessions.
//
// Every request re-reads the key from the store (no cache): a session lasts only while the secret
// that opened it would still authenticate. A revoked or expired key, or a secret rotated out whose
// grace period has ended, ends its sessions at the next request, on every instance.

/**
 * A session token: `csess_` and 43 base62 characters (256 bits). The marker lets the masker recognise a
 * token wherever one ends up (a URL, a header echoed into a log: kernel/mask.ts, maskCredentials), as
 * it recognises service-key and webhook secrets.
 *
 * In a sandbox on demand the session lives in the sandbox's own store, beside the key that opened it, and
 * its token ends with the sandbox's key tag, as that key's secret does (domain/sandboxes KEY_TAG_LENGTH):
 * the tag routes the console's requests to the sandbox (server/src/sandboxes/console-routing.ts) without
 * the account's store knowing the session. The remaining 35 random characters still carry 208 bits.
 */
const TOKEN_PREFIX = "csess_";
const TOKEN_LENGTH = 43;
const TOKEN_SHAPE = /^csess_[0-9A-Za-z]{43}$/;

/** Whether a presented token has the shape of a session token (nothing else is looked up or routed). */
export const isWellFormedToken = (token: string) => TOKEN_SHAPE.test(token);

/** The sandbox on demand a domain's console sessions are in (DomainDeps.sandbox), as the console shows it. */
export interface SessionSandbox {
  id: string;
  name: string;
}

export const sessionDigest = (token: string) => createHash("sha256").update(token).digest("hex");

/**
 * The CSRF token of a session: derived from the session token, so the server recomputes it from the
 * cookie on each request and stores nothing more. Knowing it without the cookie is useless, and it
 * cannot be turned back into the token.
 */
export const csrfTokenFor = (token: string) => createHash("sha256").update(`console-csrf:${token}`).digest("base64url");

/** Why a secret that signed in no longer authenticates, or null while it still does. */
export function keyRefusal(key: ServiceKeyDoc | null, secretHash: string, at: Date): string | null {
  if (!key) return "the key no longer exists";
  if (key.revoked_at) return "the key was revoked";
  if (key.expires_at && Date.parse(key.expires_at) <= at.getTime()) return "the key expired";
  if (key.secret_hash === secretHash) return null;
  if (
    key.previous_secret_hash === secretHash &&
    key.previous_expires_at &&
    Date.parse(key.previous_expires_at) > at.getTime()
  ) {
    return null;
  }
  return "the secret that signed in was rotated out and its grace period has ended";
}

export interface SignedIn {
  /** Goes into the cookie only; never stored. */
  token: string;
  csrfToken: string;
  /** How long the session lasts from now (the setting, or less when the key expires sooner). */
  lifetimeSeconds: number;
  session: ConsoleSessionDoc;
  key: ServiceKeyDoc;
}

export type Resolved = { session: ConsoleSessionDoc; key: ServiceKeyDoc } | { refused: string };

export function createConsoleSessions(deps: {
  store: ConsoleSessionStore;
  now: Now;
  serviceKeys: ServiceKeys;
  /** How long a session lasts from sign-in (CONSOLE_SESSION_TTL_SECONDS); it is never extended. */
  ttlSeconds: number;
  /** Set when this domain serves a sandbox on demand: its id, its name, and the tag its tokens end with. */
  sandbox?: { id: string; name: string; keyTag: string } | undefined;
}): ConsoleSessions {
  const { store, now, serviceKeys, ttlSeconds } = deps;
  const tag = deps.sandbox?.keyTag ?? "";

  return {
    sandbox: deps.sandbox ? { id: deps.sandbox.id, name: deps.sandbox.name } : null,

    /**
     * Exchanges a service key's secret for a new session. The secret is checked exactly as an API
     * request's would be (401 `unauthorized` for a malformed, unknown, expired or revoked key).
     */
    async signIn(secret: string): Promise<SignedIn> {
      const key = await serviceKeys.authenticate(secret);
      const at = now();
      const token = `${TOKEN_PREFIX}${randomBase62(TOKEN_LENGTH - tag.length)}${tag}`;
      let expires = at.getTime() + ttlSeconds * 1000;
      if (key.expires_at) expires = Math.min(expires, Date.parse(key.expires_at));
      const session: ConsoleSessionDoc = {
        id: sessionDigest(token),
        livemode: key.livemode,
        created_at: createdAt(at),
        key_id: key.id,
        secret_hash: hashSecret(secret),
        expires_at: iso(new Date(expires)),
      };
      await store.insert("console_sessions", session);
      const lifetimeSeconds = Math.max(0, Math.floor((expires - at.getTime()) / 1000));
      return { token, csrfToken: csrfTokenFor(token), lifetimeSeconds, session, key };
    },

    /**
     * The session a cookie's token names and its key, re-read from the store; or why there is none.
     * A session whose key no longer authenticates is deleted on the spot.
     */
    async resolve(token: string): Promise<Resolved> {
      const session = await store.get("console_sessions", sessionDigest(token));
      const at = now();
      if (!session) return { refused: "no such session (signed out, or never signed in)" };
      if (Date.parse(session.expires_at) <= at.getTime()) {
        await store.delete("console_sessions", session.id);
        return { refused: "the session expired" };
      }
      const key = await serviceKeys.find(session.key_id);
      const refusal = keyRefusal(key, session.secret_hash, at);
      if (refusal !== null || !key) {
        await store.delete("console_sessions", session.id);
        return { refused: refusal ?? "the key no longer exists" };
      }
      return { session, key };
    },

    /** Whether this store has the session (routing: a token ending with a sandbox's tag by chance is not its). */
    async holds(token: string): Promise<boolean> {
      return (await store.get("console_sessions", sessionDigest(token))) !== null;
    },

    /** Ends the session (sign-out). Ending one that does not exist is not an error. */
    async signOut(token: string): Promise<void> {
      await store.delete("console_sessions", sessionDigest(token));
    },

    /** Deletes the sessions past their end (housekeeping); returns how many. */
    sweep: () => store.deleteMany("console_sessions", { expires_at: { $lt: iso(now()) } }),
  };
}

/** The developer console's sessions. */
export interface ConsoleSessions {
  /** The sandbox on demand these sessions act in, or null for the account's (production, the default sandbox). */
  readonly sandbox: SessionSandbox | null;
  /**
   * Exchanges a service key's secret for a new session. The secret is checked exactly as an API
   * request's would be (401 `unauthorized` for a malformed, unknown, expired or revoked key).
   */
  signIn(secret: string): Promise<SignedIn>;
  /**
   * The session a cookie's token names and its key, re-read from the store; or why there is none.
   * A session whose key no longer authenticates is deleted on the spot.
   */
  resolve(token: string): Promise<Resolved>;
  /** Whether this store has the session (routing: a token ending with a sandbox's tag by chance is not its). */
  holds(token: string): Promise<boolean>;
  /** Ends the session (sign-out). Ending one that does not exist is not an error. */
  signOut(token: string): Promise<void>;
  /** Deletes the sessions past their end (housekeeping); returns how many. */
  sweep: () => Promise<number>;
}
