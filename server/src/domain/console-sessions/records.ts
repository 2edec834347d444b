import type { BaseDoc } from "../../store/port.ts";
import { collection } from "../kernel/records.ts";
import type { AreaDocs, AreaStore, AreaTx } from "../kernel/store.ts";

/**
 * A developer-console session (console-sessions.ts), stored under the SHA-256 digest of its
 * random token: the token itself lives only in the browser's HttpOnly cookie.
 */
export interface ConsoleSessionDoc extends BaseDoc {
  /** The service key the holder signed in with; re-checked on every request. */
  key_id: string;
  /** SHA-256 of the secret that signed in (as service_keys stores it): the session ends when it stops working. */
  secret_hash: string;
  /** When the session ends, whatever happens: sign-in time plus CONSOLE_SESSION_TTL_SECONDS (or the key's expiry). */
  expires_at: string;
}

export const consoleSessionCollections = {
  console_sessions: collection<ConsoleSessionDoc>([{ fields: ["expires_at"] }]),
};

/** The store as the console-sessions area sees it: its own collections and the kernel's (kernel/store.ts). */
export type ConsoleSessionStore = AreaStore<typeof consoleSessionCollections>;
export type ConsoleSessionTx = AreaTx<typeof consoleSessionCollections>;
export type ConsoleSessionDocs = AreaDocs<typeof consoleSessionCollections>;
