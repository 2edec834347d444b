// `npm run bench:profile -- <scenario id> [seconds]`: one benchmark scenario (./scenarios.ts) under a
// CPU profile of its server, to see where the time goes before and after a change. The server starts,
// warms up for WARMUP_SECONDS, then samples its own CPU (the inspector's Profiler, every INTERVAL_US)
// for the measured seconds of load only. The profile is written to
// test/bench/results/profiles/<scenario>-<time>.cpuprofile (open it in Chrome DevTools or speedscope),
// and its self time per function and per module is printed, as percentages of the busy samples: those
// compare across runs and machines, absolute times do not.
//
// The servers started from ./targets (payments, bare, validated) can be profiled; the production
// build runs the same code.

import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { formatSummary, mapToSources, summarize } from "./cpuprofile.ts";
import { startScriptTarget } from "./launch.ts";
import { failures, load, preflight } from "./load.ts";
import { SCENARIOS } from "./scenarios.ts";
import type { ProfileMessage } from "./targets/protocol.ts";

const WARMUP_SECONDS = 2;
const INTERVAL_US = 500;
const PROFILES_DIR = fileURLToPath(new URL("./results/profiles/", import.meta.url));

const [id, secondsArg] = process.argv.slice(2);
const scenario = SCENARIOS.find((s) => s.id === id);
const profilable = SCENARIOS.filter((s) => s.target === "payments" || s.target === "bare" || s.target === "validated");
if (!scenario || !profilable.includes(scenario)) {
  console.error(
    `usage: npm run bench:profile -- <scenario> [seconds]; scenarios: ${profilable.map((s) => s.id).join(", ")}`,
  );
  process.exit(2);
}
const seconds = secondsArg === undefined ? 10 : Number(secondsArg);
if (!Number.isInteger(seconds) || seconds < 1) {
  console.error("seconds must be a whole number of at least 1");
  process.exit(2);
}

const target = await startScriptTarget(scenario.target as "payments" | "bare" | "validated");
const child = target.child;
if (!child) throw new Error("the target has no IPC channel");
const reply = (type: string) =>
  new Promise<void>((resolve) => {
    const on = (message: { type?: string }) => {
      if (message?.type !== type) return;
      child.off("message", on);
      resolve();
    };
    child.on("message", on);
  });
const send = (message: ProfileMessage) => child.send(message);

let exitCode = 1;
try {
  await preflight(scenario, target);
  const warmup = await load(scenario, target, WARMUP_SECONDS);
  const started = reply("profile-started");
  send({ type: "profile-start", intervalUs: INTERVAL_US });
  await started;
  const result = await load(scenario, target, seconds);
  mkdirSync(PROFILES_DIR, { recursive: true });
  const file = `${PROFILES_DIR}${scenario.id}-${new Date().toISOString().replace(/[:.]/g, "-")}.cpuprofile`;
  const written = reply("profile-written");
  send({ type: "profile-stop", file });
  await written;
  mapToSources(file);
  console.log(
    `${scenario.name}: ${result.requests.average.toFixed(0)} req/s over ${seconds} s, p50 ${result.latency.p50} ms, ` +
      `p99 ${result.latency.p99} ms, ${failures(result) + failures(warmup)} failed`,
  );
  console.log(formatSummary(summarize(file), file));
  exitCode = failures(result) + failures(warmup) === 0 ? 0 : 1;
} finally {
  await target.stop();
}
process.exit(exitCode);
