import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, SERVER_DIR, spawnServer } from "../support/process.ts";

// The production build (docs/operating.md "Production"): `npm run build` turns the server into plain JavaScript
// in server/dist, which runs on Node without the TypeScript loader and carries the generated contract
// inside it, so only the server's npm dependencies are needed at run time.

const run = promisify(execFile);
const dataDir = mkdtempSync(join(tmpdir(), "payments-build-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const production = {
  NODE_ENV: "production",
  PORT: "0",
  DATA_DIR: dataDir,
  VAULT_MASTER_KEY: Buffer.alloc(32, 7).toString("base64"),
  VAULT_FINGERPRINT_KEY: Buffer.alloc(32, 9).toString("base64"),
};

describe("the production build", { timeout: 120_000 }, () => {
  beforeAll(async () => {
    await run("npm", ["run", "build", "-w", "@payments/server"], { cwd: ROOT });
  }, 120_000);

  it("bundles the generated contract: nothing in dist/ imports a workspace package or TypeScript", () => {
    const dist = resolve(SERVER_DIR, "dist");
    const files = readdirSync(dist).filter((f) => f.endsWith(".js"));
    expect(files).toEqual(expect.arrayContaining(["main.js", "cli.js"]));
    for (const file of files) {
      const code = readFileSync(join(dist, file), "utf8");
      expect(code, file).not.toMatch(/from ["']@payments\//);
      expect(code, file).not.toMatch(/from ["'][^"']+\.ts["']/);
      expect(code, file).not.toMatch(/["']tsx["']/);
    }
  });

  it("sizes the heap before it loads the server: main.js imports the sizing alone, then the rest dynamically", () => {
    // server/src/main.ts (issue 36): a static import of the server would be loaded before the heap's
    // sizing runs, and on Node 24 loaded again after process.execve restarts the process.
    const dist = resolve(SERVER_DIR, "dist");
    const main = readFileSync(join(dist, "main.js"), "utf8");
    const statics = [...main.matchAll(/^import\s+(?:[^"']*\s+from\s+)?["'](\.\/[^"']+)["']/gm)].map((m) => m[1] ?? "");
    expect(statics.length).toBeGreaterThan(0);
    for (const file of statics) {
      const code = readFileSync(join(dist, file), "utf8");
      expect(code, file).toMatch(/max-old-space-size/);
      expect(code, file).not.toMatch(/^import .* from ["'](?!node:)/m);
    }
    expect(main).toMatch(/await import\(["']\.\/server-main[^"']*\.js["']\)/);
  });

  it("starts with plain node in production and answers readiness, health and the API", async () => {
    const server = spawnServer(production, { mode: "built" });
    try {
      const url = await server.listening;
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: "ready", checks: { store: "ok" } });
      // server/src/compile-cache.ts: a Node with a compile cache (22.10+, 24) has it written beside the build
      // by the time the server answers (it is flushed once it listens, so a later SIGKILL keeps it).
      const cache = resolve(SERVER_DIR, "dist/.compile-cache");
      // cast: @types/node 20 does not declare flushCompileCache (Node 22.10+); whether it exists is the question.
      const nodeModule = (await import("node:module")).default as unknown as { flushCompileCache?: unknown };
      const nodeHasOne = typeof nodeModule.flushCompileCache === "function";
      expect(existsSync(cache) && readdirSync(cache, { recursive: true }).length > 1).toBe(nodeHasOne);
      // Production's stdout is the log stream, and no terminal here: no secret in it, and no key made;
      // the log says to make the first key with the admin CLI, whose output is the operator's terminal.
      expect(server.stdout()).not.toMatch(/key_(test|live)_[0-9A-Za-z]{8}/);
      expect(server.stdout()).toMatch(/no service key exists yet, and none was made/);
      const cli = await run(
        "node",
        [resolve(SERVER_DIR, "dist/cli.js"), "create-key", "--name", "first", "--scopes", "*"],
        {
          cwd: ROOT,
          // Vitest's own BASE_URL ("/") is no server address.
          env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== "BASE_URL")), ...production },
        },
      );
      const key = cli.stdout.match(/key_test_[0-9A-Za-z]{32}/)?.[0];
      expect(key).toBeDefined();
      const merchants = await fetch(`${url}/v1/merchants`, { headers: { authorization: `Bearer ${key}` } });
      expect(merchants.status).toBe(200);
      // The hosted payment page's sources travel in dist/ (pay-page/), not in the workspace.
      const page = await fetch(`${url}/pay/plink_000000000000000000000000`);
      expect(page.status).toBe(404);
      expect(await page.text()).toContain("Payment link not found");
      expect((await fetch(`${url}/pay/assets/pay.js`)).status).toBe(200);
      // With the QR code library it imports (clients/pay-page/package.json vendoredAssets).
      const qr = await fetch(`${url}/pay/assets/qr.js`);
      expect(qr.status).toBe(200);
      expect(await qr.text()).toContain("export function encodeQR(");
      expect(server.stdout()).toMatch(/"code":"dist"/);
      // The console and the reference are served from dist/public.
      const console = await fetch(`${url}/console`);
      expect(console.status).toBe(200);
      expect(await console.text()).toContain("/console/assets/console.js");
      expect((await fetch(`${url}/console/assets/console.js`)).status).toBe(200);
      expect((await fetch(`${url}/docs/assets/redoc.standalone.js`)).status).toBe(200);
      expect((await fetch(`${url}/docs/errors`)).status).toBe(200);
    } finally {
      expect((await server.stop()).code).toBe(0);
    }
    // Production logs are JSON.
    expect(server.stdout()).toMatch(/^\{"level":30,.*"mode":"production"/m);
  });

  it("npm start runs the built server when NODE_ENV=production, and the sources otherwise", async () => {
    const launched = spawnServer({ ...production, DATA_DIR: join(dataDir, "launcher") }, { mode: "launcher" });
    try {
      const url = await launched.listening;
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      expect(launched.stdout()).toMatch(/"code":"dist"/);
    } finally {
      await launched.stop();
    }
    const development = spawnServer({ PORT: "0", DATA_DIR: ":memory:", LOG_FORMAT: "json" }, { mode: "launcher" });
    try {
      await development.listening;
      expect(development.stdout()).toMatch(/"code":"source"/);
    } finally {
      await development.stop();
    }
  });
});
