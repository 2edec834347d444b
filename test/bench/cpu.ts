// `npm run bench:cpu -- [rate] [seconds]` (issue 36, "CPU per charge at a steady rate"): what one charge
// costs the production build in CPU time, at a steady rate (open loop, default 150/s) and at saturation
// (closed loop, as `npm run bench` loads it), read from /proc: the whole process (every thread: V8's
// helpers, SQLite's checkpointer) and its main thread alone (the event loop's, which makes the queue).
// CPU time, unlike latency, hardly depends on what else shares the cores, so two versions can be
// compared on a busy machine: run it once per version, back to back (BENCH_BUILT_DIR names another
// build, launch.ts). A busy machine still adds to it: each kind is measured in ROUNDS rounds, and the
// least is the figure to compare. Then the SQLite statements each charge runs are counted
// (./targets/sql-probe.cjs), which does not depend on the machine's load at all.

import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { builtNodeFlags, startBuiltTarget } from "./launch.ts";
import { failures, load, preflight, steadyRequest } from "./load.ts";
import { openLoop } from "./open-loop.ts";
import { SCENARIOS } from "./scenarios.ts";

const RATE = Number(process.argv[2] ?? 150);
const SECONDS = Number(process.argv[3] ?? 30);
const WARMUP_SECONDS = 5;
/**
 * Measured runs of each kind. Other work on the machine only ever adds CPU time to a request (cache
 * misses, preemptions), so the least of several rounds is the steadiest figure; the median is printed too.
 */
const ROUNDS = Number(process.env.BENCH_CPU_ROUNDS ?? 5);
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

/** "process <min> µs (median <m>), main thread <min> µs (median <m>)" over rounds of [process, main]. */
function summary(rounds: number[][]): string {
  const of = (i: number) => {
    const values = rounds.map((r) => r[i] ?? Number.NaN).sort((a, b) => a - b);
    return `${Math.round(values[0] ?? Number.NaN)} µs (median ${Math.round(values[Math.floor(values.length / 2)] ?? Number.NaN)})`;
  };
  return `process ${of(0)}, main thread ${of(1)}`;
}

function scenario(id: string) {
  const found = SCENARIOS.find((s) => s.id === id);
  if (!found) throw new Error(`no scenario ${id} in ./scenarios.ts`);
  return found;
}

const PROBE = fileURLToPath(new URL("./targets/sql-probe.cjs", import.meta.url));
/** How long the statements are counted for, at the rate and at saturation (after the CPU rounds). */
const COUNT_SECONDS = 5;

/** The probe's counts, once it has written them, per charge: the total and the kinds, most first. */
async function statementsPer(file: string, charges: number): Promise<string> {
  for (const deadline = Date.now() + 10_000; !existsSync(file) && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  // cast: the probe writes an object of counts by kind (./targets/sql-probe.cjs).
  const counts = JSON.parse(readFileSync(file, "utf8")) as Record<string, number>;
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const kinds = Object.entries(counts)
    .sort((a, b) => b[1] - a[1])
    .map(([kind, n]) => `${kind} ${(n / charges).toFixed(2)}`);
  return `${(total / charges).toFixed(1)} statements per charge: ${kinds.join(", ")}`;
}

const steady = scenario("built-200");
const saturated = scenario("built-charges");
const countsDir = mkdtempSync(join(tmpdir(), "payments-cpu-"));
const countsFile = join(countsDir, "statements");
const built = await startBuiltTarget("built", [...builtNodeFlags(), `--require=${PROBE}`], { SQL_OUT: countsFile });
let failed = 0;
try {
  const [pid] = built.pids();
  if (pid === undefined) throw new Error("the production build has no process id");
  const sample = () => ({ process: cpuUs(`/proc/${pid}/stat`), main: cpuUs(`/proc/${pid}/task/${pid}/stat`) });
  /** [process, main thread] CPU µs per charge between two samples. */
  const perCharge = (a: ReturnType<typeof sample>, b: ReturnType<typeof sample>, n: number) => [
    (b.process - a.process) / n,
    (b.main - a.main) / n,
  ];

  await preflight(steady, built);
  const request = steadyRequest(steady, built);
  await openLoop(request, RATE, WARMUP_SECONDS);
  const steadyRounds: number[][] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const before = sample();
    const open = await openLoop(request, RATE, SECONDS);
    const after = sample();
    failed += open.failed;
    steadyRounds.push(perCharge(before, after, open.ok + open.failed));
    if (open.failed > 0) console.log(`  round ${round + 1} at ${RATE}/s: answers ${JSON.stringify(open.statusCodes)}`);
  }
  console.log(`at ${RATE}/s, ${ROUNDS} rounds of ${SECONDS} s: per charge ${summary(steadyRounds)}`);

  await load(saturated, built, WARMUP_SECONDS);
  const saturatedRounds: number[][] = [];
  let rate = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const start = sample();
    const result = await load(saturated, built, SECONDS);
    const end = sample();
    failed += failures(result, saturated);
    rate += result.requests.average / ROUNDS;
    saturatedRounds.push(perCharge(start, end, result.requests.total));
  }
  console.log(
    `saturation (${Math.round(rate)}/s), ${ROUNDS} rounds of ${SECONDS} s: per charge ${summary(saturatedRounds)}`,
  );

  // The statements each charge runs, counted by the probe (SIGUSR2 starts and stops a count).
  process.kill(pid, "SIGUSR2");
  const counted = await openLoop(request, RATE, COUNT_SECONDS);
  process.kill(pid, "SIGUSR2");
  console.log(`at ${RATE}/s: ${await statementsPer(`${countsFile}.1`, counted.ok + counted.failed)}`);
  process.kill(pid, "SIGUSR2");
  const loaded = await load(saturated, built, COUNT_SECONDS);
  process.kill(pid, "SIGUSR2");
  console.log(`saturation: ${await statementsPer(`${countsFile}.2`, loaded.requests.total)}`);
} finally {
  await built.stop();
  rmSync(countsDir, { recursive: true, force: true });
}
process.exit(failed === 0 ? 0 : 1);
