import { defineConfig } from "tsup";

// The publishable build of the client (README "Installing"): ES modules and declaration files in
// dist/. The declarations inline the types generated from the contract (@payments/contract/types, a
// workspace that is never published), so the package's only dependency is openapi-fetch.
export default defineConfig({
  entry: { index: "src/index.ts", webhooks: "src/webhooks.ts" },
  outDir: "dist",
  format: ["esm"],
  platform: "node",
  target: "node20",
  clean: true,
  sourcemap: true,
  tsconfig: "tsconfig.build.json",
  dts: true,
});
