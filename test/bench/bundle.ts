// The benchmark's servers run as plain JavaScript, as production does (server/build.mjs), not through
// tsx: tsx compiles with esbuild's keepNames, which calls a helper (`__name`, a defineProperty) for
// every function expression created at run time, a cost of 1.5 to 2 % of a request that only the
// TypeScript sources pay (the baselines' code is plain JavaScript in node_modules) and production never
// pays. Each target file is bundled with its workspace imports (@payments/*, the test support files);
// npm packages stay imports, pointed at the file each resolves to from where it is imported, so a
// package the server has its own copy of (server/node_modules) is the one the server gets.

import { copyFileSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const OUT_DIR = fileURLToPath(new URL("./results/.build/", import.meta.url));

/** Bundles `file` (a ./targets/*.ts) into results/.build/<name>.mjs and returns that path. */
export async function bundleTarget(file: string, name: string): Promise<string> {
  mkdirSync(OUT_DIR, { recursive: true });
  const outfile = `${OUT_DIR}${name}.mjs`;
  await build({
    entryPoints: [file],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // Readable profiles (bench:profile) without changing the code that runs.
    sourcemap: "linked",
    logLevel: "warning",
    // Keeps CommonJS packages loadable from the ESM bundle (their require calls).
    banner: {
      js: 'import { createRequire as __bundleRequire } from "node:module"; const require = __bundleRequire(import.meta.url);',
    },
    plugins: [
      {
        name: "npm-packages-stay-imports",
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, async (args) => {
            if (args.path.startsWith("@payments/") || args.path.startsWith("node:") || args.pluginData === "inner") {
              return undefined;
            }
            const resolved = await b.resolve(args.path, {
              kind: args.kind,
              resolveDir: args.resolveDir,
              importer: args.importer,
              pluginData: "inner",
            });
            if (resolved.errors.length > 0) return { errors: resolved.errors };
            return { path: resolved.path, external: true };
          });
        },
      },
    ],
  });
  // The SQLite checkpointer's thread file, looked up beside the bundle (server/build.mjs does the same).
  copyFileSync(
    fileURLToPath(new URL("../../server/src/store/sqlite/checkpointer-worker.mjs", import.meta.url)),
    `${OUT_DIR}checkpointer-worker.mjs`,
  );
  return outfile;
}
