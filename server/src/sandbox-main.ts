#!/usr/bin/env -S npx tsx
// `npm run sandbox` (node dist/sandbox.js once built): starts an embeddable sandbox (sandbox.ts) and
// prints one JSON line, `{"url":…,"key":…}`, on stdout once it answers; stops on SIGINT or SIGTERM and,
// with --stop-on-stdin-end, when its standard input ends, which is how the client's startSandbox
// (clients/typescript/src/sandbox.ts) makes sure a sandbox never outlives the test run that started it.
import { parseArgs } from "node:util";
import { ConfigError } from "./config.ts";
import { startSandbox } from "./sandbox.ts";

const { values } = parseArgs({
  options: { port: { type: "string" }, "stop-on-stdin-end": { type: "boolean" } },
  strict: true,
});

let sandbox: Awaited<ReturnType<typeof startSandbox>>;
try {
  sandbox = await startSandbox({ port: Number(values.port ?? 0) });
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
}
process.stdout.write(`${JSON.stringify({ url: sandbox.url, key: sandbox.key })}\n`);
console.error(`Sandbox at ${sandbox.url} (in memory: everything is gone when it stops). Ctrl-C stops it.`);

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await sandbox.stop();
  process.exit(0);
}
process.once("SIGINT", () => void stop());
process.once("SIGTERM", () => void stop());
if (values["stop-on-stdin-end"]) {
  process.stdin.on("end", () => void stop());
  process.stdin.resume();
}
