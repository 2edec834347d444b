// Another process on the same SQLite file, started by store.conformance.test.ts to show that
// conditional updates and transactions stay atomic across connections (the admin CLI writing while the
// server runs), where the in-process mutex cannot help. Usage: tsx <this> <path> <attempts> <start ms>;
// debits 1 from acc_shared `attempts` times from the given instant on, and prints how many succeeded.

import { TEST_COLLECTIONS, type TestDocs } from "./conformance.ts";
import type { StoreOps } from "./port.ts";
import { openSqliteStore } from "./sqlite.ts";

const [path = "", attempts = "0", start = "0"] = process.argv.slice(2);
const store = openSqliteStore({ path, collections: TEST_COLLECTIONS });
const debit = (tx: StoreOps<TestDocs>) =>
  tx.update("accounts", "acc_shared", { inc: { balance: -1 } }, { balance: { $gte: 1 } });
// Process start-up times differ; a common start makes the contenders actually overlap.
await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(start) - Date.now())));
let succeeded = 0;
for (let i = 0; i < Number(attempts); i++) {
  const after = i % 2 === 0 ? await debit(store) : await store.transaction(debit);
  if (after !== null) succeeded++;
}
await store.close();
process.stdout.write(String(succeeded));
