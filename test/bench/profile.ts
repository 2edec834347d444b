// `npm run bench:profile -- <scenario id> [seconds]`: one benchmark scenario (./scenarios.ts) under a
// CPU profile of its server, to see where the time goes before and after a change. The server starts,
// warms up for WARMUP_SECONDS, then samples its own CPU (the inspector's Profiler, every INTERVAL_US)
// for the measured seconds of load only. The profile is written to
// test/bench/results/profiles/<scenario>-<time>.cpuprofile (open it in Chrome DevTools or speedscope),
// and its self time per function and per module is printed, as percentages of the busy samples: those
// compare across runs and machines, absolute times do not.
//
// The servers started from ./targets (payments, bare, validated) are profiled over the measured seconds
// only. The production build (built-charges, built-get, built-live-charges and adyen-charges — the Adyen
// connector against the stand-in — at saturation; built-200, built-500 at a steady
// rate, open loop, as `npm run bench` sends them: its SQLite file, one worker) runs
// under `node --cpu-prof`, which writes the profile when the process exits: that profile also holds its
// start-up and warm-up (about a second of ajv compiling the validators, the `ajv` and `express-openapi-
// validator` rows), so run it for long enough (30 s or more) that the load dominates.

import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { formatSummary, mapToSources, summarize } from "./cpuprofile.ts";
import { startAdyenTarget, startBuiltTarget, startScriptTarget } from "./launch.ts";
import { failures, load, preflight, steadyRequest } from "./load.ts";
import { openLoop } from "./open-loop.ts";
import { SCENARIOS } from "./scenarios.ts";
import type { ProfileMessage } from "./targets/protocol.ts";

const WARMUP_SECONDS = 2;
const INTERVAL_US = 500;
const PROFILES_DIR = fileURLToPath(new URL("./results/profiles/", import.meta.url));

const [id, secondsArg] = process.argv.slice(2);
const scenario = SCENARIOS.find((s) => s.id === id);
const profilable = SCENARIOS.filter(
  (s) =>
    s.target === "payments" ||
    s.target === "bare" ||
    s.target === "validated" ||
    s.target === "built" ||
    s.target === "adyen",
);
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

const profileFile = (name: string) =>
  `${PROFILES_DIR}${name}-${new Date().toISOString().replace(/[:.]/g, "-")}.cpuprofile`;

if (scenario.target === "built" || scenario.target === "adyen") {
  const dir = mkdtempSync(join(tmpdir(), "payments-profile-"));
  const flags = ["--cpu-prof", `--cpu-prof-dir=${dir}`, `--cpu-prof-interval=${INTERVAL_US}`];
  // adyen-charges: the same build against the Adyen stand-in (its own process, outside the profile).
  const target = scenario.target === "adyen" ? await startAdyenTarget(flags) : await startBuiltTarget("built", flags);
  /** At saturation (autocannon). */
  const saturated = async () => {
    const warmup = await load(scenario, target, WARMUP_SECONDS);
    const result = await load(scenario, target, seconds);
    const summary = `${result.requests.average.toFixed(0)} req/s over ${seconds} s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms`;
    return { summary, failed: failures(result, scenario) + failures(warmup, scenario) };
  };
  /** At the scenario's steady rate, open loop, as `npm run bench` sends it. */
  const steady = async (rate: number) => {
    const request = steadyRequest(scenario, target);
    const warmup = await openLoop(request, rate, WARMUP_SECONDS);
    const result = await openLoop(request, rate, seconds);
    const summary = `${rate}/s open loop over ${seconds} s, p50 ${result.p50Ms.toFixed(1)} ms, p99 ${result.p99Ms.toFixed(1)} ms, max ${result.maxMs.toFixed(1)} ms`;
    return { summary, failed: result.failed + warmup.failed };
  };
  let code = 1;
  try {
    await preflight(scenario, target);
    const { summary, failed } = scenario.rate ? await steady(scenario.rate) : await saturated();
    await target.stop();
    const written = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
    if (!written) throw new Error(`the production build wrote no profile in ${dir}`);
    mkdirSync(PROFILES_DIR, { recursive: true });
    const file = profileFile(scenario.id);
    renameSync(join(dir, written), file);
    mapToSources(file);
    console.log(`${scenario.name}: ${summary}, ${failed} failed (the profile includes start-up and warm-up)`);
    console.log(formatSummary(summarize(file), file));
    code = failed === 0 ? 0 : 1;
  } finally {
    await target.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(code);
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
  const file = profileFile(scenario.id);
  const written = reply("profile-written");
  send({ type: "profile-stop", file });
  await written;
  mapToSources(file);
  console.log(
    `${scenario.name}: ${result.requests.average.toFixed(0)} req/s over ${seconds} s, p50 ${result.latency.p50} ms, ` +
      `p99 ${result.latency.p99} ms, ${failures(result, scenario) + failures(warmup, scenario)} failed`,
  );
  console.log(formatSummary(summarize(file), file));
  exitCode = failures(result, scenario) + failures(warmup, scenario) === 0 ? 0 : 1;
} finally {
  await target.stop();
}
process.exit(exitCode);
