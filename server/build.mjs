// `npm run build`: the production build (docs/operating.md "Production"). esbuild bundles the server and the
// admin CLI into server/dist as plain JavaScript, so production runs `node dist/main.js` without the
// TypeScript loader. The generated contract (@payments/contract: the OpenAPI document and the
// operation table) is bundled in; this package's npm dependencies stay imports, resolved from
// node_modules at run time (better-sqlite3 is a native addon and cannot be bundled anyway), so dist/
// needs `npm ci --omit=dev -w @payments/server` and nothing else. The pages the server serves (the
// console and the API reference, built by clients/console) are copied into dist/public, where the
// built server looks for them (src/http/pages.ts).
import { copyFileSync, cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = JSON.parse(readFileSync(join(here, "package.json"), "utf8"));
// `--outdir <dir>` builds somewhere else than dist/: the crash suites (test/support/crash.ts
// builtServer) build a copy of their own, which ops/build.test.ts's rebuild of dist/ cannot take away
// while they run. The bundle imports its npm dependencies, so the directory must lie inside this
// package (under node_modules/ for a throwaway one), where Node finds them.
const { values: args } = parseArgs({ options: { outdir: { type: "string" } } });
const outdir = args.outdir === undefined ? join(here, "dist") : resolve(args.outdir);

rmSync(outdir, { recursive: true, force: true });
await build({
  absWorkingDir: here,
  entryPoints: { main: "src/main.ts", cli: "src/cli.ts", sandbox: "src/sandbox-main.ts" },
  outdir,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // One shared chunk for the code main and cli have in common.
  splitting: true,
  sourcemap: true,
  // Runtime dependencies (and their subpaths) stay imports; everything else, the workspace contract
  // included, is bundled.
  external: Object.keys(pkg.dependencies),
  logLevel: "warning",
});

// Every emitted chunk must be ASCII: V8 keeps a script's source in the heap for as long as the script
// lives, one byte a character, but two for the whole script when a single character is not Latin-1 (a
// "≥" or "×" in a comment esbuild kept): the server's main chunk took 4.4 MB of heap instead of 2.2
// (issue 36, test/bench/heap.ts). esbuild escapes such characters in strings and names, not in comments.
for (const file of readdirSync(outdir).filter((f) => f.endsWith(".js"))) {
  const lines = readFileSync(join(outdir, file), "utf8").split("\n");
  const at = lines.findIndex((line) => /[^ -~\t\r]/.test(line));
  if (at >= 0) {
    throw new Error(
      `${file} line ${at + 1} holds a character outside printable ASCII (${lines[at].trim().slice(0, 120)}): write it in ASCII in the source (a comment esbuild kept), or V8 stores the whole bundle at two bytes a character`,
    );
  }
}

// The hosted payment page's sources (the @payments/pay-page workspace, read at start-up by
// src/http/pay-page.ts) are copied next to the bundle, so dist/ serves the page without the workspace.
const pageSources = join(dirname(createRequire(import.meta.url).resolve("@payments/pay-page/package.json")), "src");
mkdirSync(join(outdir, "pay-page"));
for (const file of readdirSync(pageSources).filter((f) => !f.includes(".test.") && !f.endsWith(".d.ts"))) {
  copyFileSync(join(pageSources, file), join(outdir, "pay-page", file));
}
// The browser libraries the page imports (clients/pay-page/package.json `vendoredAssets`), as installed.
const pagePackage = createRequire(import.meta.url).resolve("@payments/pay-page/package.json");
for (const [file, pkg] of Object.entries(JSON.parse(readFileSync(pagePackage, "utf8")).vendoredAssets ?? {})) {
  copyFileSync(createRequire(pagePackage).resolve(pkg), join(outdir, "pay-page", file));
}

// The SQLite checkpointer's thread runs a file of its own, looked up beside the code that starts it
// (src/store/sqlite/checkpointer.ts): beside the bundle's chunks.
copyFileSync(join(here, "src/store/sqlite/checkpointer-worker.mjs"), join(outdir, "checkpointer-worker.mjs"));

// src/cli.ts and src/sandbox-main.ts start `#!/usr/bin/env -S npx tsx` (they run from source in the
// repository); the built CLI and sandbox command run on plain Node.
for (const name of ["cli.js", "sandbox.js"]) {
  const file = join(outdir, name);
  writeFileSync(file, readFileSync(file, "utf8").replace(/^#!.*\n/, "#!/usr/bin/env node\n"));
}
// Through ensureBuilt, which builds them under a lock unless they are newer than their sources: a
// server running from the sources serves the same clients/console/dist (src/http/pages.ts), and a
// rebuild of it while that server runs (the test suites run two files at a time, one of them the build's
// own test) would take its pages away mid-request.
const pages = await import("../clients/console/build.mjs");
cpSync(await pages.ensureBuilt({ quiet: true }), join(outdir, "public"), { recursive: true });
console.log(
  `built ${outdir}: main.js (the server), cli.js (the admin CLI), sandbox.js (the embeddable sandbox), pay-page/ (the hosted payment page), public/ (the console and the API reference)`,
);
