import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  type KeyObject,
  randomBytes,
} from "node:crypto";

// The card number is encrypted with AES-256-GCM (random nonce, the token id as associated data) under a
// per-token data key, and the data key is wrapped by a master key from configuration (envelope encryption).
// Deleting a token erases both (crypto-shredding, TokenDoc.sealed); rotating the master key means re-wrapping
// data keys, never re-encrypting card numbers. The fingerprint is an HMAC-SHA256 under a separate key, so it
// reveals nothing about the number and cannot be recomputed without that key.

/** The encrypted card number: AES-256-GCM under a per-token data key, itself wrapped by the master key. */
export interface SealedCard {
  /** Which master key wrapped the data key (for rotation of the master key). */
  kek_id: string;
  /** base64: nonce(12) | ciphertext | tag(16) of the data key under the master key. */
  wrapped_dek: string;
  /** base64: nonce(12) | ciphertext | tag(16) of the card number under the data key; AAD = token id. */
  sealed_pan: string;
}

export interface VaultKeys {
  /** Names the master key; stored with every sealed card so a key ring can find the right one. */
  kekId: string;
  /** The master (key-encryption) key: 32 bytes. */
  kek: Buffer;
  /** The HMAC key for card fingerprints: 32 bytes, distinct from the master key. */
  fingerprintKey: Buffer;
}

const ALGORITHM = "aes-256-gcm";
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * The long-lived keys (the master key, the fingerprint key) as KeyObjects, made once per key: given a
 * Buffer, every createCipheriv / createHmac call would import the key material again. Keyed by the
 * Buffer itself, so every VaultKeys value (a key ring's too) gets its own, and nothing is kept once
 * the keys are dropped. Data keys are fresh per token and never cached.
 */
const keyObjects = new WeakMap<Buffer, KeyObject>();

function keyObject(key: Buffer): KeyObject {
  let object = keyObjects.get(key);
  if (object === undefined) {
    object = createSecretKey(key);
    keyObjects.set(key, object);
  }
  return object;
}

/** base64 of nonce(12) | ciphertext | tag(16), the layout SealedCard documents. */
function seal(key: Buffer | KeyObject, plaintext: Buffer, aad: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(aad, "utf8"));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([nonce, ciphertext, cipher.getAuthTag()]).toString("base64");
}

/** The inverse of seal; GCM's tag check makes any change to the bytes, the key or the AAD throw. */
function open(key: Buffer | KeyObject, sealed: string, aad: string, what: string): Buffer {
  const bytes = Buffer.from(sealed, "base64");
  if (bytes.length < NONCE_BYTES + TAG_BYTES) throw new Error(`The ${what} is too short to be sealed data.`);
  const decipher = createDecipheriv(ALGORITHM, key, bytes.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(aad, "utf8"));
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
  } catch {
    throw new Error(`The ${what} failed authentication: wrong key, wrong token, or altered data.`);
  }
}

/** The data key is bound to its master key and owner (a token id, or a secret's context): a wrapped key copied onto another will not open. */
function wrapAad(kekId: string, owner: string): string {
  return `${kekId}:${owner}`;
}

/** Encrypts a card number for one token under a fresh data key. */
export function sealPan(pan: string, tokenId: string, keys: VaultKeys): SealedCard {
  const dek = randomBytes(KEY_BYTES);
  const plaintext = Buffer.from(pan, "utf8");
  try {
    return {
      kek_id: keys.kekId,
      wrapped_dek: seal(keyObject(keys.kek), dek, wrapAad(keys.kekId, tokenId)),
      sealed_pan: seal(dek, plaintext, tokenId),
    };
  } finally {
    // Keep clear key and card bytes out of the heap as soon as they are not needed.
    dek.fill(0);
    plaintext.fill(0);
  }
}

/**
 * Decrypts a token's card number. `keys` is either the current keys or a key ring looked up by the
 * sealed card's kek_id, so cards sealed under an earlier master key still open after a rotation.
 */
export function openPan(sealed: SealedCard, tokenId: string, keys: VaultKeys | ((kekId: string) => VaultKeys)): string {
  const { kek, kekId } = typeof keys === "function" ? keys(sealed.kek_id) : keys;
  if (kekId !== sealed.kek_id) {
    throw new Error(`The card was sealed under master key ${sealed.kek_id}, but the key given is ${kekId}.`);
  }
  // The kek_id is also in the AAD, so a record whose kek_id was edited to name another configured key
  // does not open under it.
  const dek = open(keyObject(kek), sealed.wrapped_dek, wrapAad(sealed.kek_id, tokenId), "wrapped data key");
  try {
    const plaintext = open(dek, sealed.sealed_pan, tokenId, "sealed card number");
    try {
      return plaintext.toString("utf8");
    } finally {
      plaintext.fill(0);
    }
  } finally {
    dek.fill(0);
  }
}

/**
 * `fp_` + 32 hex characters (TokenCard.fingerprint's pattern): equal for the same card within an
 * environment, and different between test and live mode so sandbox data never links to live cards.
 */
export function fingerprintPan(pan: string, livemode: boolean, keys: VaultKeys): string {
  const digest = createHmac("sha256", keyObject(keys.fingerprintKey))
    .update(`${livemode ? "live" : "test"}:${pan}`, "utf8")
    .digest("hex");
  return `fp_${digest.slice(0, 32)}`;
}

/**
 * A secret the server must be able to use again (a webhook endpoint's signing secret), sealed the same
 * way as a card number: AES-256-GCM under a fresh data key wrapped by the master key. `context` names
 * its owner (`webhook_endpoint:we_…`) and is the associated data, so a sealed secret copied onto another
 * record does not open there.
 */
export interface SealedSecret {
  kek_id: string;
  /** base64: nonce(12) | ciphertext | tag(16) of the data key under the master key. */
  wrapped_dek: string;
  /** base64: nonce(12) | ciphertext | tag(16) of the secret under the data key. */
  sealed: string;
}

export function sealSecret(secret: string, context: string, keys: VaultKeys): SealedSecret {
  const dek = randomBytes(KEY_BYTES);
  const plaintext = Buffer.from(secret, "utf8");
  try {
    return {
      kek_id: keys.kekId,
      wrapped_dek: seal(keyObject(keys.kek), dek, wrapAad(keys.kekId, context)),
      sealed: seal(dek, plaintext, context),
    };
  } finally {
    dek.fill(0);
    plaintext.fill(0);
  }
}

export function openSecret(
  sealed: SealedSecret,
  context: string,
  keys: VaultKeys | ((kekId: string) => VaultKeys),
): string {
  const { kek, kekId } = typeof keys === "function" ? keys(sealed.kek_id) : keys;
  if (kekId !== sealed.kek_id) {
    throw new Error(`The secret was sealed under master key ${sealed.kek_id}, but the key given is ${kekId}.`);
  }
  const dek = open(keyObject(kek), sealed.wrapped_dek, wrapAad(sealed.kek_id, context), "wrapped data key");
  try {
    return open(dek, sealed.sealed, context, "sealed secret").toString("utf8");
  } finally {
    dek.fill(0);
  }
}
