import { configDefaults, defineConfig } from "vitest/config";

// The server's unit and store tests. Stryker's sandbox (.stryker-tmp/, a copy of this workspace) and its
// reports are not tests of their own (npm run test:mutation, stryker.config.mjs).
export default defineConfig({
  test: {
    exclude: [...configDefaults.exclude, ".stryker-tmp/**", "reports/**"],
  },
});
