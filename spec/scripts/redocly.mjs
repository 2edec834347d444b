#!/usr/bin/env node
// `npm run lint:redocly`: Redocly CLI's `recommended` ruleset over both generated documents, as
// outside tools and reviewers run it.
//   - the 3.1 document (the contract): no error and no warning;
//   - the 3.0 copy (for tools that read only 3.0, such as dredd): no error. Its warnings are listed but
//     do not fail, since some rules ask for what 3.0 cannot say.
// Redocly's rule `no-invalid-media-type-examples` checks every example against its schema; the test
// suite checks the 3.0 examples once more with Ajv (test/contract/openapi30-examples.test.ts).
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const specDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DOCUMENTS = [
  { file: resolve(specDir, "../generated/openapi/openapi.3.1.json"), failOnWarnings: true },
  { file: resolve(specDir, "../generated/openapi/openapi.3.0.json"), failOnWarnings: false },
];

function redoclyBin() {
  const local = resolve(specDir, "node_modules/.bin/redocly");
  return existsSync(local) ? local : resolve(specDir, "../node_modules/.bin/redocly");
}

/** Redocly's findings for one document (it exits 1 when there are errors; the JSON is printed either way). */
function lint(file) {
  const args = ["lint", "--extends=recommended", "--format=json", file];
  // No usage telemetry and no update notice: the lint runs in tests and CI, offline.
  const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" };
  let out;
  try {
    out = execFileSync(redoclyBin(), args, { cwd: specDir, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    if (typeof error.stdout !== "string" || !error.stdout.trim().startsWith("{")) {
      throw new Error(`redocly lint ${file} failed to run:\n${error.stderr ?? error.message}`);
    }
    out = error.stdout;
  }
  return JSON.parse(out);
}

let failed = false;
for (const { file, failOnWarnings } of DOCUMENTS) {
  const name = file.slice(resolve(specDir, "..").length + 1);
  const { problems } = lint(file);
  const errors = problems.filter((p) => p.severity === "error");
  const warnings = problems.filter((p) => p.severity === "warn");
  for (const p of problems) {
    const where = p.location?.[0]?.pointer ?? "";
    console.log(`${name} ${p.severity} ${p.ruleId} at ${where}: ${p.message}`);
  }
  const fails = errors.length > 0 || (failOnWarnings && warnings.length > 0);
  console.log(
    `${name}: ${errors.length} error(s), ${warnings.length} warning(s) under Redocly's recommended rules${fails ? "" : " — passes"}.`,
  );
  failed ||= fails;
}
if (failed) {
  console.error("Fix the spec (spec/) or its post-processing (spec/scripts/generate.mjs), then `npm run generate`.");
  process.exit(1);
}
