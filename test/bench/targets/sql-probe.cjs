// Loaded into the production build by `npm run bench:cpu` (../cpu.ts, `node --require`), never by the
// server itself: counts the SQLite statements the process runs (better-sqlite3's run, get, all and
// iterate), by verb and table, between two SIGUSR2 signals, and writes the counts to the file named by
// SQL_OUT (`.1`, `.2`, … per count). Statements per charge, unlike CPU time, do not depend on what else
// the machine runs.
const { createRequire } = require("node:module");
const { writeFileSync } = require("node:fs");

const Database = createRequire(`${process.cwd()}/`)("better-sqlite3");
const probe = new Database(":memory:");
const proto = Object.getPrototypeOf(probe.prepare("SELECT 1"));
probe.close();

let counting = false;
let counts = new Map();
let dumps = 0;
/** "INSERT charges", "SELECT events", "COMMIT", … from a statement's SQL. */
const kinds = new Map();
function kindOf(sql) {
  let kind = kinds.get(sql);
  if (kind === undefined) {
    const verb = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? "?";
    const table = /\b(?:INTO|FROM|UPDATE)\s+"?(\w+)"?/i.exec(sql)?.[1];
    kind = table ? `${verb} ${table}` : verb;
    kinds.set(sql, kind);
  }
  return kind;
}
for (const method of ["run", "get", "all", "iterate"]) {
  const original = proto[method];
  proto[method] = function (...args) {
    if (counting) {
      const kind = kindOf(this.source);
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
    }
    return original.apply(this, args);
  };
}
process.on("SIGUSR2", () => {
  if (!counting) {
    counts = new Map();
    counting = true;
    return;
  }
  counting = false;
  writeFileSync(`${process.env.SQL_OUT}.${++dumps}`, JSON.stringify(Object.fromEntries(counts)));
});
