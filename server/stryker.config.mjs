// Mutation testing of the money-critical code: `npm run test:mutation` (README, "Tests"). A measurement of
// how strong the server's unit tests are, not part of `npm test`: it takes minutes.
//
// Stryker copies this workspace into .stryker-tmp/ (inside server/, so Node still finds the hoisted
// root node_modules, the symlinked @payments/* workspaces and better-sqlite3's native build), then runs
// the server's vitest unit tests (vitest.config.ts; never the e2e layer in test/) against each mutant.
// Incremental: the results are kept in reports/stryker-incremental.json (not in git), so a rerun only
// retests mutants whose code or covering tests changed; `npm run test:mutation -- --force` retests all.

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  packageManager: "npm",
  testRunner: "vitest",
  vitest: { configFile: "vitest.config.ts", related: true },
  coverageAnalysis: "perTest",
  plugins: ["@stryker-mutator/vitest-runner", "./mutation/ignore-error-wording.mjs"],

  // The files whose mistakes move or expose money. Add an area as it lands, with its unit tests next to
  // it: e.g. "src/domain/fraud/**/*.ts", "src/domain/cashouts/**/*.ts", "src/domain/webhooks/**/*.ts"
  // (keep the "!**/*.test.ts" exclusion below when using a glob).
  mutate: [
    "src/domain/charges.ts",
    "src/domain/ledger.ts",
    "src/domain/money.ts",
    "src/domain/service-keys.ts",
    "src/domain/vault/crypto.ts",
    "src/domain/mask.ts",
    "src/http/idempotency.ts",
    "!**/*.test.ts",
  ],

  // Error wording is not mutated (tests assert codes and params): see mutation/ignore-error-wording.mjs.
  ignorers: ["error-wording"],

  incremental: true,
  incrementalFile: "reports/stryker-incremental.json",
  reporters: ["clear-text", "html", "progress"],
  htmlReporter: { fileName: "reports/mutation/index.html" },
  // Survivors are listed in the HTML report; the console keeps to the per-file score table.
  clearTextReporter: { reportMutants: false, reportTests: false },

  tempDirName: ".stryker-tmp",
  ignorePatterns: ["data", "coverage"],
  thresholds: { high: 85, low: 70, break: null },
};
