import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../support/process.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// The client as an integrator gets it (clients/typescript/README.md "Installing"): `npm pack` makes a
// tarball; a fresh project outside this repository installs it (its one dependency, openapi-fetch,
// comes from the registry), type-checks a program against it with tsc, and runs it against a real
// server. Nothing from the workspace may be needed: not @payments/contract, not the sources.

const run = promisify(execFile);
const CLIENT_DIR = resolve(ROOT, "clients/typescript");
const TSC = resolve(ROOT, "node_modules/typescript/bin/tsc");
const work = mkdtempSync(join(tmpdir(), "payments-client-package-"));
const project = join(work, "integrator");
afterAll(() => rmSync(work, { recursive: true, force: true }));

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
    // prepack builds dist/ (build.mjs) first.
    await run("npm", ["pack", "--pack-destination", work], { cwd: CLIENT_DIR });
    const packed = readdirSync(work).find((f) => f.endsWith(".tgz"));
    if (!packed) throw new Error("npm pack made no tarball");
    tarball = join(work, packed);
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
    mkdirSync(project);
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: "integrator", private: true, type: "module" }, null, 2),
    );
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
          files: ["main.ts"],
        },
        null,
        2,
      ),
    );
    writeFileSync(join(project, "main.ts"), PROGRAM);
    await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball], { cwd: project });
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
});
