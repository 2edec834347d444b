import { randomBytes } from "node:crypto";
import {
  closeSync,
  fstatSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import type { VaultKeys } from "../domain/vault/crypto.ts";
import { KEY_BYTES, parseVaultKeys } from "../domain/vault/keys.ts";
import { isRecord } from "../guards.ts";

// Development mode's vault keys: a key file under DATA_DIR, so `npm start` works on a fresh machine
// without VAULT_MASTER_KEY (production refuses to start without it: config.ts). The file holds two
// random keys and is readable by its owner only.

const DEV_KEY_FILE = "vault-keys.json";

function errorCode(err: unknown): string | undefined {
  return err instanceof Error && "code" in err ? String(err.code) : undefined;
}

/** An open descriptor for the key file, or null if there is none yet. */
function openIfExists(path: string): number | null {
  try {
    return openSync(path, "r");
  } catch (err) {
    if (errorCode(err) === "ENOENT") return null;
    throw err;
  }
}

/** Checks and parses the key file open on `fd`; reading through the descriptor checks the file it reads. */
function readKeyFile(path: string, fd: number): VaultKeys {
  const stat = fstatSync(fd);
  if (!stat.isFile()) throw new Error(`${path} is not a regular file.`);
  // Windows has no POSIX modes (Node reports 0o666 for every file), so there is nothing to check there.
  if (process.platform !== "win32" && (stat.mode & 0o077) !== 0) {
    const mode = (stat.mode & 0o777).toString(8);
    throw new Error(
      `${path} holds the vault keys but group or others may access it (mode ${mode}); run: chmod 600 ${path}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(fd, "utf8"));
  } catch {
    // JSON.parse's own message quotes the text, which here is key material.
    throw new Error(`${path} is not valid JSON.`);
  }
  const { masterKey, fingerprintKey } = isRecord(parsed) ? parsed : {};
  if (typeof masterKey !== "string" || typeof fingerprintKey !== "string") {
    throw new Error(`${path} must be a JSON object with string fields masterKey and fingerprintKey.`);
  }
  return parseVaultKeys({ masterKey, fingerprintKey });
}

/**
 * Writes a new key file unless one exists. The file is written in full under a temporary name and then
 * hard-linked into place: like a rename it never exposes a half-written file, and unlike a rename it
 * fails if another process created the file meanwhile, so two servers starting together both end up
 * with the first file's keys instead of one of them sealing cards under keys that were overwritten.
 */
function createKeyFile(dataDir: string, path: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const content = {
    masterKey: randomBytes(KEY_BYTES).toString("base64"),
    fingerprintKey: randomBytes(KEY_BYTES).toString("base64"),
  };
  const temp = join(dataDir, `.${DEV_KEY_FILE}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    const fd = openSync(temp, "wx", 0o600);
    try {
      writeFileSync(fd, `${JSON.stringify(content, null, 2)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(temp, path);
    } catch (err) {
      if (errorCode(err) !== "EEXIST") throw err;
    }
  } finally {
    rmSync(temp, { force: true });
  }
}

/**
 * Development mode only: the vault keys from `${dataDir}/vault-keys.json`, created with two fresh
 * random keys on first use (directory 0700, file 0600). Production takes its keys from configuration
 * through parseVaultKeys.
 */
export function loadOrCreateDevVaultKeys(dataDir: string): VaultKeys {
  const path = join(dataDir, DEV_KEY_FILE);
  let fd = openIfExists(path);
  if (fd === null) {
    createKeyFile(dataDir, path);
    fd = openSync(path, "r");
  }
  try {
    return readKeyFile(path, fd);
  } finally {
    closeSync(fd);
  }
}
