// `npm run bench:cpu -- [rate] [seconds]` (issue 36, "CPU per charge at a steady rate"): what one charge
// costs the production build in CPU time, at a steady rate (open loop, default 150/s) and at saturation
// (closed loop, as `npm run bench` loads it), read from /proc: the whole process (every thread: V8's
// helpers, SQLite's checkpointer) and its main thread alone (the event loop's, which makes the queue).
// CPU time, unlike latency, hardly depends on what else shares the cores, so two versions can be
// compared on a busy machine: run it once per version, back to back (BENCH_BUILT_DIR names another
// build, launch.ts), and more than once each, since a busy machine still moves it by a few percent.

import { readFileSync } from "node:fs";
import { builtNodeFlags, startBuiltTarget } from "./launch.ts";
import { failures, load, preflight, steadyRequest } from "./load.ts";
import { openLoop } from "./open-loop.ts";
import { SCENARIOS } from "./scenarios.ts";

const RATE = Number(process.argv[2] ?? 150);
const SECONDS = Number(process.argv[3] ?? 30);
const WARMUP_SECONDS = 5;
/** The kernel's clock ticks per second (USER_HZ), in which /proc reports CPU time. */
const CLOCK_TICKS = 100;

if (!Number.isInteger(RATE) || RATE < 1 || !Number.isInteger(SECONDS) || SECONDS < 1) {
  console.error("usage: npm run bench:cpu -- [rate per second] [seconds]; both whole numbers of at least 1");
  process.exit(2);
}

/** utime + stime of a /proc stat file, in µs. */
function cpuUs(file: string): number {
  // The fields after the command name (which may hold spaces, so it is skipped up to its ")").
  const fields = readFileSync(file, "utf8").split(") ")[1]?.split(" ") ?? [];
  // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
}

function scenario(id: string) {
  const found = SCENARIOS.find((s) => s.id === id);
  if (!found) throw new Error(`no scenario ${id} in ./scenarios.ts`);
  return found;
}

const steady = scenario("built-200");
const saturated = scenario("built-charges");
const built = await startBuiltTarget("built", builtNodeFlags());
let failed = 0;
try {
  const [pid] = built.pids();
  if (pid === undefined) throw new Error("the production build has no process id");
  const sample = () => ({ process: cpuUs(`/proc/${pid}/stat`), main: cpuUs(`/proc/${pid}/task/${pid}/stat`) });
  const perCharge = (a: ReturnType<typeof sample>, b: ReturnType<typeof sample>, n: number) =>
    `process ${Math.round((b.process - a.process) / n)} µs, main thread ${Math.round((b.main - a.main) / n)} µs`;

  await preflight(steady, built);
  const request = steadyRequest(steady, built);
  await openLoop(request, RATE, WARMUP_SECONDS);
  const before = sample();
  const open = await openLoop(request, RATE, SECONDS);
  const after = sample();
  failed += open.failed;
  console.log(
    `at ${RATE}/s for ${SECONDS} s (${open.ok} charges, ${open.failed} failed): per charge ${perCharge(before, after, open.ok + open.failed)}`,
  );

  await load(saturated, built, WARMUP_SECONDS);
  const start = sample();
  const result = await load(saturated, built, SECONDS);
  const end = sample();
  failed += failures(result, saturated);
  console.log(
    `saturation for ${SECONDS} s (${result.requests.total} charges, ${Math.round(result.requests.average)}/s): per charge ${perCharge(start, end, result.requests.total)}`,
  );
} finally {
  await built.stop();
}
process.exit(failed === 0 ? 0 : 1);
