// `npm run build` (and `npm pack`, through prepack): the publishable client in dist/ (clients/typescript/README.md
// "Installing"). tsc compiles src/ to ES modules and declaration files (tsconfig.build.json); the
// declarations import the contract's generated types from `@payments/contract/types`, a workspace
// that is never published, so that file is shipped beside them as dist/contract.d.ts (it holds
// types only) and the imports are pointed at it. The package's only dependency is then openapi-fetch.
import { execFileSync } from "node:child_process";
import { copyFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, "dist");
const require = createRequire(import.meta.url);

rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", "tsconfig.build.json"], {
  cwd: here,
  stdio: "inherit",
});
copyFileSync(require.resolve("@payments/contract/types"), join(dist, "contract.d.ts"));

const CONTRACT = /(["'])@payments\/contract\/types\1/g;
for (const file of readdirSync(dist)) {
  if (!file.endsWith(".d.ts") && !file.endsWith(".js")) continue;
  const path = join(dist, file);
  const text = readFileSync(path, "utf8");
  if (file.endsWith(".js") && text.includes("@payments/contract")) {
    throw new Error(`${file} imports @payments/contract at run time; only types may come from it`);
  }
  writeFileSync(path, text.replace(CONTRACT, '"./contract.js"'));
}
console.log(`built ${dist}`);
