import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { thrownBy } from "../../test-support/domain.ts";
import { loadOrCreateDevVaultKeys } from "./vault-key-file.ts";

const MASTER = randomBytes(32);
const FINGERPRINT = randomBytes(32);

describe("loadOrCreateDevVaultKeys", () => {
  let root: string;
  let dataDir: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "vault-keys-"));
    dataDir = join(root, "nested", "data");
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it("creates the directory (0700) and a key file (0600) holding two different 32-byte keys", () => {
    const keys = loadOrCreateDevVaultKeys(dataDir);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    const file = join(dataDir, "vault-keys.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const content = JSON.parse(readFileSync(file, "utf8"));
    expect(Buffer.from(content.masterKey, "base64").equals(keys.kek)).toBe(true);
    expect(Buffer.from(content.fingerprintKey, "base64").equals(keys.fingerprintKey)).toBe(true);
    expect(keys.kek.length).toBe(32);
    expect(keys.kek.equals(keys.fingerprintKey)).toBe(false);
    expect(readdirSync(dataDir)).toEqual(["vault-keys.json"]);
  });

  it("returns the same keys on every later call", () => {
    const first = loadOrCreateDevVaultKeys(dataDir);
    const second = loadOrCreateDevVaultKeys(dataDir);
    expect(second.kekId).toBe(first.kekId);
    expect(second.kek.equals(first.kek)).toBe(true);
    expect(second.fingerprintKey.equals(first.fingerprintKey)).toBe(true);
  });

  it("gives each new data directory its own keys", () => {
    const a = loadOrCreateDevVaultKeys(dataDir);
    const b = loadOrCreateDevVaultKeys(join(root, "other"));
    expect(a.kek.equals(b.kek)).toBe(false);
  });

  it("uses an existing key file written by hand", () => {
    loadOrCreateDevVaultKeys(dataDir);
    const file = join(dataDir, "vault-keys.json");
    writeFileSync(
      file,
      JSON.stringify({ masterKey: MASTER.toString("hex"), fingerprintKey: FINGERPRINT.toString("hex") }),
    );
    expect(loadOrCreateDevVaultKeys(dataDir).kek.equals(MASTER)).toBe(true);
  });

  it("refuses a key file that group or others may read, saying to chmod 600", () => {
    const first = loadOrCreateDevVaultKeys(dataDir);
    const file = join(dataDir, "vault-keys.json");
    for (const mode of [0o644, 0o640, 0o604]) {
      chmodSync(file, mode);
      const err = thrownBy(() => loadOrCreateDevVaultKeys(dataDir));
      expect(err.message).toContain(`mode ${mode.toString(8)}`);
      expect(err.message).toContain(`chmod 600 ${file}`);
      expect(err.message).not.toContain(first.kek.toString("base64"));
    }
    chmodSync(file, 0o600);
    expect(loadOrCreateDevVaultKeys(dataDir).kek.equals(first.kek)).toBe(true);
  });

  it("refuses a damaged key file without quoting it", () => {
    loadOrCreateDevVaultKeys(dataDir);
    const file = join(dataDir, "vault-keys.json");
    const secret = randomBytes(32).toString("base64");
    writeFileSync(file, `{"masterKey": "${secret}",`);
    const err = thrownBy(() => loadOrCreateDevVaultKeys(dataDir));
    expect(err.message).toBe(`${file} is not valid JSON.`);
    writeFileSync(file, JSON.stringify({ masterKey: secret }));
    expect(() => loadOrCreateDevVaultKeys(dataDir)).toThrow(/string fields masterKey and fingerprintKey/);
    writeFileSync(file, JSON.stringify({ masterKey: secret, fingerprintKey: "short" }));
    const short = thrownBy(() => loadOrCreateDevVaultKeys(dataDir));
    expect(short.message).toMatch(/fingerprint key/);
    expect(short.message).not.toContain(secret);
  });

  it("leaves every process with the same keys when several create the file at once", async () => {
    // Each child loads the module, reports ready, and waits for the others, so all call the loader
    // at once however slowly they start.
    const children = 6;
    const ready = mkdtempSync(join(root, "ready-"));
    const moduleUrl = new URL("./vault-key-file.ts", import.meta.url).href;
    const code = [
      `import { readdirSync, writeFileSync } from "node:fs";`,
      `const m = await import(${JSON.stringify(moduleUrl)});`,
      `writeFileSync(${JSON.stringify(ready)} + "/" + process.pid, "");`,
      `while (readdirSync(${JSON.stringify(ready)}).length < ${children});`,
      `console.log(m.loadOrCreateDevVaultKeys(${JSON.stringify(dataDir)}).kekId);`,
    ].join("\n");
    const run = () =>
      promisify(execFile)(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], {
        cwd: fileURLToPath(new URL(".", import.meta.url)),
      });
    const results = await Promise.all(Array.from({ length: children }, run));
    const ids = new Set(results.map((r) => r.stdout.trim()));
    expect(ids).toEqual(new Set([loadOrCreateDevVaultKeys(dataDir).kekId]));
    expect(readdirSync(dataDir)).toEqual(["vault-keys.json"]);
  }, 30_000);
});
