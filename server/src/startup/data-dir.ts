import { accessSync, chmodSync, constants, mkdirSync, statSync } from "node:fs";
import { resolve as resolvePath } from "node:path";
import type { Config } from "../config.ts";
import { codeOf, messageOf, StartupError } from "../startup-error.ts";

/** DATA_DIR=":memory:" runs entirely in memory (tests): an in-memory SQLite store and throwaway vault keys. */
export const IN_MEMORY = ":memory:";

/** Where the embedded store keeps its data, as an absolute path (start-up log and errors). */
export function dataLocation(config: Config): string {
  return config.DATA_DIR === IN_MEMORY ? IN_MEMORY : resolvePath(config.DATA_DIR);
}

/** Why DATA_DIR cannot hold the store, in words; the code stays in the message for searching. */
export function dataDirProblem(config: Config, err: unknown): StartupError {
  const code = codeOf(err);
  const where = dataLocation(config);
  const why =
    code === "ENOTDIR" || code === "EEXIST"
      ? "is a file, or lies under one; it must be a directory"
      : code === "EACCES" || code === "EPERM" || code === "EROFS" || code === "SQLITE_CANTOPEN"
        ? "cannot be written by this process (check its permissions, or point DATA_DIR elsewhere)"
        : code === "SQLITE_READONLY"
          ? "holds a database this process cannot write (check the permissions of the files in it)"
          : "cannot hold the embedded store";
  return new StartupError("DATA_DIR", `${where} ${why} (${code ?? messageOf(err)})`, { cause: err });
}

/** Whether anything is kept under DATA_DIR: the SQLite store, or development's generated vault keys. */
const usesDataDir = (config: Config) =>
  config.DATA_DIR !== IN_MEMORY && (!config.MONGODB_URI || !(config.VAULT_MASTER_KEY && config.VAULT_FINGERPRINT_KEY));

/**
 * DATA_DIR holds card fingerprints, key digests, sealed card data and (in development) the vault keys,
 * so it is readable by its owner only (docs/operating.md "Configuration"). A directory the server
 * makes is made so (0700); an existing one that other users may read, write or enter is narrowed to
 * its owner's permissions. One this process cannot narrow (another user's), or a directory shared on
 * purpose (the sticky bit, as on /tmp), is refused with one line saying why, rather than used as it
 * is. Returns the mode the directory had when it was narrowed, else null.
 */
export function privateDataDir(config: Config): number | null {
  if (!usesDataDir(config)) return null;
  const dir = dataLocation(config);
  let mode: number;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    mode = statSync(dir).mode & 0o7777;
  } catch (err) {
    throw dataDirProblem(config, err);
  }
  if (process.platform === "win32" || (mode & 0o077) === 0) return null;
  const shown = mode.toString(8).padStart(3, "0");
  if ((mode & 0o1000) !== 0) {
    throw new StartupError(
      "DATA_DIR",
      `${dir} is a directory shared with other users (mode ${shown}, sticky): give the server a directory of its own, such as a new one inside it`,
    );
  }
  try {
    accessSync(dir, constants.W_OK);
  } catch (err) {
    throw dataDirProblem(config, err);
  }
  try {
    chmodSync(dir, mode & 0o700);
  } catch (err) {
    throw new StartupError(
      "DATA_DIR",
      `${dir} is open to other users (mode ${shown}) and this process cannot make it owner-only (it is not the directory's owner): run chmod 700 on it as its owner, or point DATA_DIR elsewhere (${codeOf(err) ?? messageOf(err)})`,
      { cause: err },
    );
  }
  return mode;
}
