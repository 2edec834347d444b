import { readFileSync, writeFileSync } from "node:fs";
import { defineConfig } from "tsup";

// The production build (README "Production"): the server and the admin CLI as plain JavaScript, so
// production runs `node dist/main.js` without the TypeScript loader. The generated contract
// (@payments/contract: the OpenAPI document and the operation table) is bundled in, so dist/ needs
// only this package's npm dependencies at run time, installed with `npm ci --omit=dev`; every other
// import is left to node_modules (better-sqlite3 is a native addon and cannot be bundled anyway).
export default defineConfig({
  entry: { main: "src/main.ts", cli: "src/cli.ts" },
  outDir: "dist",
  format: ["esm"],
  platform: "node",
  target: "node20",
  clean: true,
  sourcemap: true,
  // One shared chunk for the code main and cli have in common.
  splitting: true,
  noExternal: ["@payments/contract"],
  // src/cli.ts starts `#!/usr/bin/env -S npx tsx` (it runs from source in the repository); the built
  // one runs on plain Node.
  async onSuccess() {
    const cli = "dist/cli.js";
    writeFileSync(cli, readFileSync(cli, "utf8").replace(/^#!.*\n/, "#!/usr/bin/env node\n"));
  },
});
