import { createHash } from "node:crypto";
import type { VaultKeys } from "./crypto.ts";

// Key material for the vault: a master key from configuration (VAULT_MASTER_KEY), and a separate
// fingerprint key (VAULT_FINGERPRINT_KEY). Reading the configuration is the config module's job; this
// turns its strings into keys (development mode's key file is adapters/vault-key-file.ts). Errors name
// the key and what is wrong with it but never echo a key's value.

export const KEY_BYTES = 32;
const HEX_KEY = /^[0-9a-fA-F]{64}$/;
/** Standard base64 of 32 bytes: 43 characters and one `=` of padding. */
const BASE64_KEY = /^[A-Za-z0-9+/]{43}=$/;
/** The kek id is stored with every sealed card and appears in logs and errors, so it is kept plain. */
const KEK_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * A key that cannot be used, naming which (`key`), so the caller can name the setting it came from
 * (startup/domain.ts: VAULT_MASTER_KEY or VAULT_FINGERPRINT_KEY) instead of guessing.
 */
export class VaultKeyError extends Error {
  override name = "VaultKeyError";
  constructor(
    readonly key: "masterKey" | "fingerprintKey" | "kekId",
    message: string,
  ) {
    super(message);
  }
}

function decodeKey(key: "masterKey" | "fingerprintKey", label: string, value: string): Buffer {
  const text = value.trim();
  if (HEX_KEY.test(text)) return Buffer.from(text, "hex");
  if (BASE64_KEY.test(text)) return Buffer.from(text, "base64");
  throw new VaultKeyError(
    key,
    `The ${label} must be ${KEY_BYTES} bytes written as 64 hex characters or 44 base64 characters; ` +
      `the value given (${text.length} characters) is neither.`,
  );
}

/**
 * Decodes the master and fingerprint keys. Without a kekId, the id is the first 8 hex characters of
 * SHA-256 of the master key's bytes: it tells keys apart (for rotation) without revealing them, and is
 * the same whichever encoding the key was written in.
 */
export function parseVaultKeys(input: { masterKey: string; fingerprintKey: string; kekId?: string }): VaultKeys {
  const kek = decodeKey("masterKey", "vault master key (masterKey)", input.masterKey);
  const fingerprintKey = decodeKey("fingerprintKey", "vault fingerprint key (fingerprintKey)", input.fingerprintKey);
  // One key for two jobs would let anyone holding the fingerprint key also unwrap data keys.
  if (kek.equals(fingerprintKey)) {
    throw new VaultKeyError("fingerprintKey", "The vault master key and fingerprint key must be two different keys.");
  }
  const kekId = input.kekId ?? createHash("sha256").update(kek).digest("hex").slice(0, 8);
  if (!KEK_ID.test(kekId)) {
    throw new VaultKeyError(
      "kekId",
      "The vault master key id (kekId) must be 1 to 64 letters, digits, dots, dashes or underscores.",
    );
  }
  return { kekId, kek, fingerprintKey };
}
