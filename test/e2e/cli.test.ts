import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { loadConfig, startServer } from "@payments/server";
import { afterAll, describe, expect, it } from "vitest";

// DESIGN §5: production keys are made by the operator with the CLI, which prints the secret once;
// the server itself never prints a production key.

const run = promisify(execFile);
const serverDir = resolve(dirname(fileURLToPath(import.meta.url)), "../../server");
const tsx = resolve(serverDir, "../node_modules/.bin/tsx");
const dataDir = mkdtempSync(join(tmpdir(), "payments-cli-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

// Vitest puts Vite's BASE_URL ("/") into the environment; the CLI must see the operator's settings only.
const { BASE_URL: _vite, ...env } = process.env;
const cli = (...args: string[]) =>
  run(tsx, ["src/cli.ts", ...args], { cwd: serverDir, env: { ...env, DATA_DIR: dataDir, LOG_LEVEL: "silent" } });

// Each run starts a tsx process (about a second, more on a busy machine).
describe("payments-admin CLI", { timeout: 60_000 }, () => {
  it("creates a production key whose secret works once the server runs on the same store", async () => {
    const created = await cli("create-key", "--name", "checkout backend", "--scopes", "merchants,charges", "--live");
    const secret = created.stdout.match(/key_live_[0-9A-Za-z]{32}/)?.[0];
    expect(secret).toBeDefined();
    expect(created.stdout).toContain("created production key kid_");

    const listed = await cli("list-keys", "--live");
    expect(listed.stdout).toContain("checkout backend");
    expect(listed.stdout).toContain(secret?.slice(0, 13));
    expect(listed.stdout).not.toContain(secret);

    const server = await startServer({ config: loadConfig({ PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "silent" }) });
    try {
      // The store already has a key, so the first start creates no sandbox key.
      expect(server.bootstrapSecret).toBeNull();
      const res = await fetch(`${server.url}/v1/merchants`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "Live shop" }),
      });
      expect(res.status).toBe(201);
      expect((await res.json()) as { livemode: boolean }).toMatchObject({ livemode: true });
      const vault = await fetch(`${server.url}/v1/tokens/tok_000000000000000000000000`, {
        headers: { authorization: `Bearer ${secret}` },
      });
      expect(vault.status).toBe(403); // scopes as given: no vault
    } finally {
      await server.close();
    }
  });

  it("refuses unknown scopes and missing arguments with usage and exit code 2", async () => {
    const refused = await Promise.all(
      [
        ["create-key", "--name", "x", "--scopes", "everything"],
        ["create-key", "--scopes", "fraud"],
        ["create-key", "--name", "x", "--scopes", "fraud", "--expires-at", "someday"],
        ["frobnicate"],
      ].map((args) =>
        cli(...args).then(
          () => null,
          (e: { code: number; stderr: string }) => e,
        ),
      ),
    );
    for (const err of refused) {
      expect(err?.code).toBe(2);
      expect(err?.stderr).toContain("usage:");
    }
  });
});
