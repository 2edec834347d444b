// The hook file dredd loads (with `require`, so it cannot be TypeScript on Node 20). It only passes
// dredd's hooks object to the TypeScript hooks (./hooks.ts), which dredd.test.ts publishes under this
// global for the length of one run. Loaded outside that test it throws, which dredd reports as a
// warning ("Skipping hook loading"); the test notices unregistered hooks and fails.
const hooks = require("hooks");

const register = globalThis[Symbol.for("@payments/tests:contract:dredd-hooks")];
if (typeof register !== "function") {
  throw new Error("dredd-hooks.cjs must be loaded by test/contract/dredd.test.ts, which provides the hooks");
}
register(hooks);
