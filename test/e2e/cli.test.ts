import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { loadConfig, openStore, startServer } from "@payments/server";
import { afterAll, describe, expect, it } from "vitest";

// Production keys are made by the operator with the CLI, which prints the secret once; the server itself
// never prints a production key.

const run = promisify(execFile);
const serverDir = resolve(dirname(fileURLToPath(import.meta.url)), "../../server");
const dataDir = mkdtempSync(join(tmpdir(), "payments-cli-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

// Vitest puts Vite's BASE_URL ("/") into the environment; the CLI must see the operator's settings
// only. This suite runs the CLI and the server on one DATA_DIR, so a MONGODB_URI (the suites on
// MongoDB) is left out too, and so is npm's INIT_CWD, which would point the CLI at a developer's .env.
const { BASE_URL: _vite, MONGODB_URI: _mongo, INIT_CWD: _initCwd, ...env } = process.env;
const cli = (...args: string[]) =>
  // tsx's loader in this one process (the tsx command would start a second one).
  run(process.execPath, ["--import", "tsx", "src/cli.ts", ...args], {
    cwd: serverDir,
    env: { ...env, DATA_DIR: dataDir, LOG_LEVEL: "silent" },
  });

/** The domain's caller for a sandbox key with every scope (the CLI suite moves money through the domain directly). */
const caller = { keyId: "kid_cli", livemode: false, scopes: ["*"], keyPrefix: "key_test_cli", requestId: "req_cli" };

// Each run starts a Node process with tsx's loader (about a second, more on a busy machine).
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

    const server = await startServer({
      config: loadConfig({ PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "silent", PRODUCTION_ACQUIRER: "simulator" }),
    });
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

  it("ledger verify: 0 differences and exit code 0 after money moved; each difference printed and exit code 1", async () => {
    const config = loadConfig({ PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "silent", PRODUCTION_ACQUIRER: "simulator" });
    const server = await startServer({ config });
    let merchantId = "";
    try {
      const merchant = await server.domain.merchants.create(caller, { name: "Ledger shop" });
      merchantId = merchant.id;
      const token = await server.domain.tokens.create(caller, {
        card: "4242424242424242",
        holder: "L",
        exp_month: 12,
        exp_year: 2031,
      });
      const charge = await server.domain.charges.create(caller, {
        merchant_id: merchant.id,
        amount: 5000,
        currency: "USD",
        payment_method: { type: "card", token: token.id },
      });
      await server.domain.charges.refund(caller, charge.id, { amount: 1200 });
    } finally {
      await server.close();
    }
    const ok = await cli("ledger", "verify");
    expect(ok.stdout).toMatch(/ledger verify: \d+ postings, \d+ entries, \d+ balances: 0 difference\(s\)/);

    const store = await openStore(config);
    await store.update("balances", `${merchantId}:USD`, { inc: { available: 1 } });
    await store.close();
    const err = await cli("ledger", "verify").then(
      () => null,
      (e: { code: number; stdout: string }) => e,
    );
    expect(err?.code).toBe(1);
    expect(err?.stdout).toContain(
      `difference: balance ${merchantId}:USD: available is 3801, its account's lines add up to 3800`,
    );
    expect(err?.stdout).toMatch(/: 1 difference\(s\)/);
  });

  // Every usage message has a unit test (server/src/cli-args.test.ts); here, the exit codes and streams.
  it("answers help with the usage on stdout and exit code 0", async () => {
    const { stdout } = await cli("help");
    expect(stdout).toMatch(/^usage: payments-admin <command>/);
    for (const command of ["create-key", "list-keys", "help"]) expect(stdout).toContain(`  ${command}`);
  });

  it("explains a missing argument in words, with the usage, on stderr and exit code 2", async () => {
    const err = await cli("create-key", "--scopes", "charges").then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(err?.code).toBe(2);
    expect(err?.stderr).toMatch(/^create-key needs --name NAME/);
    expect(err?.stderr).toContain("usage: payments-admin");
  });
});
