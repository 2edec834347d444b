import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../support/process.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// The client as an integrator gets it (clients/typescript/README.md "Quick start: from an empty
// folder to a first charge" and "Installing"): the README's quick-start commands, run as written in an
// empty folder outside this repository, make an ES module project, pack the client into it with
// `npm pack` and install the tarball (its one dependency, openapi-fetch, comes from the registry).
// That project then type-checks a program against it with tsc and runs it, and the README's
// first-call.ts, against a real server. Nothing from the workspace may be needed: not
// @payments/contract, not the sources.

const run = promisify(execFile);
const CLIENT_DIR = resolve(ROOT, "clients/typescript");
const CLIENT_README = readFileSync(resolve(CLIENT_DIR, "README.md"), "utf8");
const TSC = resolve(ROOT, "node_modules/typescript/bin/tsc");
const TSX = resolve(ROOT, "node_modules/tsx/dist/cli.mjs");
const work = mkdtempSync(join(tmpdir(), "payments-client-package-"));
/** The folder the quick start makes (`mkdir my-shop`). */
const project = join(work, "my-shop");
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The body of the README's one fenced block whose info string is exactly `info`. */
function fenced(markdown: string, info: string): string {
  const blocks = [...markdown.matchAll(/^```(.*)\n([\s\S]*?)^```$/gm)].filter((m) => m[1]?.trim() === info);
  if (blocks.length !== 1) throw new Error(`expected one \`\`\`${info} block in the README, found ${blocks.length}`);
  return blocks[0]?.[2] ?? "";
}

/** The README's quick-start section, from its heading to the next. */
function quickStartSection(markdown: string): string {
  const start = markdown.indexOf("\n## Quick start");
  if (start < 0) throw new Error("no Quick start section");
  const end = markdown.indexOf("\n## ", start + 1);
  return markdown.slice(start + 1, end < 0 ? undefined : end + 1);
}

/** The integrator's program: both entry points, typed calls, a typed problem, a webhook round trip. */
const PROGRAM = `
import { createPaymentsClient, PaymentsApiError, unwrap, type Merchant } from "@payments/client";
import { signWebhookPayload, verifyWebhook, WebhookVerificationError } from "@payments/client/webhooks";

declare const process: { env: Record<string, string | undefined>; exitCode?: number };

const payments = createPaymentsClient({ baseUrl: process.env.API!, apiKey: process.env.KEY!, maxRetries: 0 });

const merchant: Merchant = unwrap(await payments.POST("/v1/merchants", { body: { name: "Integrator shop" } }));
const token = unwrap(
  await payments.POST("/v1/tokens", {
    body: { card: "4242424242424242", holder: "Ada Lovelace", exp_month: 12, exp_year: 2031 },
  }),
);
const charge = unwrap(
  await payments.POST("/v1/charges", {
    body: { merchant_id: merchant.id, amount: 1250, currency: "EUR", payment_method: { type: "card", token: token.id } },
  }),
);

// The types are the contract's: a misspelt field does not compile.
// @ts-expect-error: "nmae" is not a field of MerchantCreate
void payments.POST("/v1/merchants", { body: { nmae: "typo" } });

let problem = "";
try {
  unwrap(await payments.GET("/v1/charges/{id}", { params: { path: { id: "tx_000000000000000000000000" } } }));
} catch (err) {
  if (err instanceof PaymentsApiError) problem = \`\${err.status} \${err.code}\`;
}

const body = JSON.stringify({ id: "evt_1", type: "payment.captured", tx_id: charge.id });
const header = signWebhookPayload({ payload: body, secret: "whsec_test" });
const event = verifyWebhook({ payload: body, header, secret: "whsec_test" });
let forged = "";
try {
  verifyWebhook({ payload: body, header, secret: "whsec_other" });
} catch (err) {
  if (err instanceof WebhookVerificationError) forged = err.reason;
}

console.log(JSON.stringify({ merchant: merchant.id, status: charge.status, amount: charge.amount, problem, event: event.type, forged }));
`;

describe("the packed client in a project outside the repository", { timeout: 180_000 }, () => {
  let tarball: string;
  let server: TestServer;

  beforeAll(async () => {
    // The quick start's commands as a reader runs them, in an empty folder, with `~/payments` (the
    // reader's clone) standing for this repository. `npm pack <folder>` runs the client's prepack,
    // which builds dist/ (build.mjs) first. Nothing is asked of npm's audit or funding services.
    const commands = fenced(CLIENT_README, "sh quick-start").replaceAll("~/payments", ROOT);
    await run("bash", ["-euo", "pipefail", "-c", commands], {
      cwd: work,
      env: { ...process.env, npm_config_audit: "false", npm_config_fund: "false", npm_config_prefer_offline: "true" },
    });
    const packed = readdirSync(project).find((f) => f.endsWith(".tgz"));
    if (!packed) throw new Error("the quick start's npm pack left no tarball in the project");
    tarball = join(project, packed);
    server = await startTestServer();
  }, 180_000);
  afterAll(() => server?.close());

  it("ships the built code, the declarations and the README, and no sources", async () => {
    const { stdout } = await run("tar", ["-tzf", tarball]);
    const files = stdout.trim().split("\n").sort();
    expect(files).toEqual(
      expect.arrayContaining([
        "package/package.json",
        "package/README.md",
        "package/dist/index.js",
        "package/dist/index.d.ts",
        "package/dist/webhooks.js",
        "package/dist/webhooks.d.ts",
      ]),
    );
    expect(files.filter((f) => f.startsWith("package/src/"))).toEqual([]);
    const { stdout: manifest } = await run("tar", ["-xzOf", tarball, "package/package.json"]);
    const pkg = JSON.parse(manifest) as { version: string; dependencies: Record<string, string> };
    expect(pkg.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(Object.keys(pkg.dependencies)).toEqual(["openapi-fetch"]);
    // The declarations carry the contract's types themselves.
    expect(files).toContain("package/dist/contract.d.ts");
    for (const file of files.filter((f) => f.endsWith(".d.ts") || f.endsWith(".js"))) {
      const { stdout: text } = await run("tar", ["-xzOf", tarball, file]);
      expect(text, file).not.toContain("@payments/contract");
    }
  });

  it("installs, type-checks with tsc and runs against a real server", async () => {
    // The quick start made an ES module project, so top-level await runs.
    const manifest = JSON.parse(readFileSync(join(project, "package.json"), "utf8")) as Record<string, unknown>;
    expect(manifest.type).toBe("module");
    expect(manifest.dependencies).toEqual({ "@payments/client": expect.stringMatching(/^file:payments-client-/) });
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify(
        {
          compilerOptions: {
            target: "ES2023",
            lib: ["ES2023", "DOM"],
            module: "nodenext",
            moduleResolution: "nodenext",
            strict: true,
            types: [],
            outDir: "out",
          },
          files: ["main.ts", "first-call.ts", "node-globals.d.ts"],
        },
        null,
        2,
      ),
    );
    writeFileSync(join(project, "main.ts"), PROGRAM);
    writeFileSync(join(project, "first-call.ts"), fenced(CLIENT_README, "ts first-call.ts"));
    // What @types/node gives a reader's project, for first-call.ts (no registry download here).
    writeFileSync(
      join(project, "node-globals.d.ts"),
      "declare const process: { env: Record<string, string | undefined> };\n",
    );
    // The client alone from this project; its dependency came from the registry.
    expect(readdirSync(join(project, "node_modules/@payments"))).toEqual(["client"]);
    expect(readdirSync(join(project, "node_modules"))).toContain("openapi-fetch");

    await run(process.execPath, [TSC, "-p", "."], { cwd: project });

    const { stdout } = await run(process.execPath, ["out/main.js"], {
      cwd: project,
      env: { PATH: process.env.PATH ?? "", API: server.url, KEY: server.sandboxKey },
    });
    expect(JSON.parse(stdout)).toEqual({
      merchant: expect.stringMatching(/^mch_/),
      status: "captured",
      amount: 1250,
      problem: "404 not_found",
      event: "payment.captured",
      forged: "signature_mismatch",
    });
  });

  it("runs the quick start's first-call.ts as the README says: with tsx, and with Node's type stripping where Node has it", async () => {
    const env = { PATH: process.env.PATH ?? "", PAYMENTS_URL: server.url, PAYMENTS_KEY: server.sandboxKey };
    // `npx tsx first-call.ts` after `npm install --save-dev tsx`: the same tsx, from this repository.
    const runners: string[][] = [[TSX, "first-call.ts"]];
    // Node 22.18+ and 24 run a .ts file as it is (`node first-call.ts`); Node 20 cannot.
    if ((process.features as { typescript?: string | false }).typescript) runners.push(["first-call.ts"]);
    for (const args of runners) {
      const { stdout } = await run(process.execPath, args, { cwd: project, env });
      expect(stdout, args.join(" ")).toMatch(/^charge tx_\w{24}: captured, 2500 USD \(merchant mch_\w{24}\)\n$/);
    }
  });

  it("starts the embeddable sandbox: runs docs/client.md's vitest example, as written, against sandboxes started from this clone", async () => {
    // `npm install --save-dev vitest` without a registry download: this repository's vitest, linked into
    // the quick start's project (whose own dependencies are only the client and openapi-fetch).
    const guide = readFileSync(resolve(ROOT, "docs/client.md"), "utf8");
    writeFileSync(join(project, "sandbox.test.ts"), fenced(guide, "ts sandbox.test.ts"));
    symlinkSync(resolve(ROOT, "node_modules/vitest"), join(project, "node_modules/vitest"), "dir");
    const { stdout } = await run(
      process.execPath,
      [resolve(ROOT, "node_modules/vitest/vitest.mjs"), "run", "sandbox.test.ts", "--root", project],
      {
        cwd: project,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", PAYMENTS_REPOSITORY: ROOT, NO_COLOR: "1" },
      },
    );
    // biome-ignore lint/suspicious/noControlCharactersInRegex: vitest's colours, should it still write them
    expect(stdout.replace(/\u001b\[[0-9;]*m/g, "")).toMatch(/Tests\s+1 passed \(1\)/);
  });
});

describe("the client's quick start in docs/client.md", () => {
  it("is the package README's, word for word (the README ships in the tarball; the guide is read in the repository)", () => {
    const guide = readFileSync(resolve(ROOT, "docs/client.md"), "utf8");
    expect(quickStartSection(guide)).toBe(quickStartSection(CLIENT_README));
  });
});
