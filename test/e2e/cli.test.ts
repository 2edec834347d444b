import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { OPERATIONS, SCOPES } from "@payments/contract/operations";
import { loadConfig, startServer } from "@payments/server";
import { afterAll, describe, expect, it } from "vitest";

// DESIGN §5: production keys are made by the operator with the CLI, which prints the secret once;
// the server itself never prints a production key.

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

  it("answers help, --help and -h with a usage listing every command, exit code 0", async () => {
    for (const args of [["help"], ["--help"], ["-h"], ["create-key", "--help"]]) {
      const { stdout } = await cli(...args);
      expect(stdout).toMatch(/^usage: payments-admin <command>/);
      for (const command of ["create-key", "list-keys", "help"]) expect(stdout).toContain(`  ${command}`);
    }
  });

  it("offers only the scopes some operation of the contract uses, and `*`", async () => {
    const { stdout } = await cli("help");
    const offered = /^scopes: (.*?)\s{2,}/m.exec(stdout)?.[1]?.split(", ") ?? [];
    const used = new Set(OPERATIONS.flatMap((op) => op.scopes as readonly string[]));
    expect(offered.sort()).toEqual(["*", ...used].filter((s, i, all) => all.indexOf(s) === i).sort());
    // Scopes the Scope enum names for operations that do not exist yet are not offered.
    for (const scope of SCOPES.filter((s) => s !== "*" && !used.has(s))) expect(offered).not.toContain(scope);
  });

  it("explains a missing or wrong argument in words, with the usage, and exit code 2", async () => {
    const cases: Array<[string[], RegExp]> = [
      [[], /missing command/],
      [["frobnicate"], /unknown command `frobnicate`/],
      [["create-key", "--scopes", "charges"], /create-key needs --name NAME/],
      [["create-key", "--name", "x"], /create-key needs --scopes: one or more of \*, /],
      [["create-key", "--name", "x", "--scopes", "everything"], /unknown or unusable scope\(s\): everything/],
      [
        ["create-key", "--name", "x", "--scopes", "charges", "--expires-at", "someday"],
        /--expires-at must be an RFC 3339/,
      ],
      [["create-key", "--nmae", "x"], /Unknown option '--nmae'/],
      [["list-keys", "extra"], /unexpected argument\(s\) after list-keys: extra/],
    ];
    const unused = SCOPES.find(
      (s) => s !== "*" && !OPERATIONS.some((op) => (op.scopes as readonly string[]).includes(s)),
    );
    if (unused) cases.push([["create-key", "--name", "x", "--scopes", unused], /No operation of this API needs them/]);
    const refused = await Promise.all(
      cases.map(([args]) =>
        cli(...args).then(
          () => null,
          (e: { code: number; stderr: string }) => e,
        ),
      ),
    );
    refused.forEach((err, i) => {
      const [args, message] = cases[i] as [string[], RegExp];
      expect(err?.code, args.join(" ")).toBe(2);
      expect(err?.stderr, args.join(" ")).toMatch(message);
      expect(err?.stderr).toContain("usage: payments-admin");
    });
  });
});
