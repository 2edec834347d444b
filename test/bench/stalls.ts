// `npm run bench:stalls -- [rate] [seconds]` (issue 36, "find and remove the stalls"): what the production
// build's main thread does while its slowest requests wait. The build (one worker, SQLite file, live key,
// as `npm run bench` runs it) takes POST /v1/charges open loop at `rate` a second (default 150: about a
// quarter of what this machine answers at saturation) under `node --cpu-prof`; the bare node:http echo
// takes the same rate first, as the reference. Each request's window (due → last byte) and each profile
// sample sit on the machine's monotonic clock, so they line up across the two processes.
//
// Printed:
// - the latencies beside the echo's (the issue's targets: p99 ≤ 3×, p99.9 ≤ 4×, longest ≤ 5×);
// - busy runs of the main thread (consecutive samples outside "(idle)") of STALL_MS or more: how many,
//   how long, and what they were made of (V8's garbage collector, SQLite, the validator, our code…);
// - for the slowest 1 % of requests, where the main thread's samples inside their windows went, beside
//   the same for all requests: what makes a request slow is what is over-represented there.
// The profile and a JSON report go to test/bench/results/. A measurement: run it on an idle machine.

import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type CpuProfile, moduleOf, readProfile, shortFile } from "./cpuprofile.ts";
import { builtNodeFlags, heapNote, startBuiltTarget, startScriptTarget } from "./launch.ts";
import { preflight, steadyRequest } from "./load.ts";
import { type OpenLoopResult, openLoop } from "./open-loop.ts";
import { SCENARIOS } from "./scenarios.ts";

const RATE = Number(process.argv[2] ?? 150);
const SECONDS = Number(process.argv[3] ?? 30);
const WARMUP_SECONDS = 5;
const INTERVAL_US = 250;
/** A busy run of the main thread this long or longer is a stall. */
const STALL_MS = 10;
const RESULTS_DIR = fileURLToPath(new URL("./results/", import.meta.url));

if (!Number.isInteger(RATE) || RATE < 1 || !Number.isInteger(SECONDS) || SECONDS < 1) {
  console.error("usage: npm run bench:stalls -- [rate per second] [seconds]; both whole numbers of at least 1");
  process.exit(2);
}

function scenario(id: string) {
  const found = SCENARIOS.find((s) => s.id === id);
  if (!found) throw new Error(`no scenario ${id} in ./scenarios.ts`);
  return found;
}

/**
 * Our frames that say only how work is run, not what asked for it: the store, the HTTP handler glue, and
 * the kernel's wrappers (commit hooks, the unit of work, the observer), which every use case and job goes
 * through. Skipping them names the use case, job or timer behind a sample.
 */
const PLUMBING = /\/server\/src\/(store\/|http\/handlers\.ts|domain\/kernel\/)/;

interface Sample {
  us: number;
  /** V8's pseudo-frame ("(garbage collector)", "(program)") or the top frame's module. */
  category: string;
  /** The nearest frame of our own code on the stack (what of ours was running), or the category. */
  ours: string;
}

/** Every sample of the profile, in time order, with what was on top and what of ours was below it. */
function samplesOf(profile: CpuProfile): { samples: Sample[]; idleUs: number[] } {
  const parent = new Map<number, number>();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const describe = new Map<number, { category: string; ours: string; idle: boolean }>();
  const describeNode = (id: number) => {
    const known = describe.get(id);
    if (known) return known;
    const node = byId.get(id);
    const frame = node?.callFrame ?? { functionName: "(unknown)", url: "", lineNumber: 0, columnNumber: 0 };
    const category = moduleOf(frame.url, frame.functionName);
    // The nearest frame of ours that is not the store or the HTTP plumbing: the use case, job or
    // middleware that asked for the work (the store's frames say only that SQLite ran).
    let ours = category;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)?.callFrame;
      if (f && /\/server\/src\//.test(f.url) && !PLUMBING.test(f.url)) {
        ours = `${f.functionName || "(anonymous)"} (${shortFile(f.url)}:${f.lineNumber + 1})`;
        break;
      }
    }
    const described = { category, ours, idle: frame.functionName === "(idle)" };
    describe.set(id, described);
    return described;
  };
  const samples: Sample[] = [];
  const idleUs: number[] = [];
  let us = profile.startTime;
  const ids = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < ids.length; i++) {
    us += deltas[i] ?? 0;
    const d = describeNode(ids[i] ?? 0);
    if (d.idle) idleUs.push(us);
    else samples.push({ us, category: d.category, ours: d.ours });
  }
  return { samples, idleUs };
}

interface Stall {
  startUs: number;
  endUs: number;
  samples: Sample[];
}

/** Runs of busy samples with no idle sample between them, STALL_MS or longer. */
function stallsOf(samples: Sample[], idleUs: number[]): Stall[] {
  const stalls: Stall[] = [];
  let idle = 0;
  let run: Sample[] = [];
  const close = () => {
    const first = run[0];
    const last = run[run.length - 1];
    if (first && last && (last.us - first.us) / 1000 >= STALL_MS)
      stalls.push({ startUs: first.us, endUs: last.us, samples: run });
    run = [];
  };
  for (const s of samples) {
    let interrupted = false;
    while (idle < idleUs.length && (idleUs[idle] ?? 0) < s.us) {
      interrupted = true;
      idle++;
    }
    // A gap of several intervals with no sample at all is time the thread was not running (descheduled).
    const previous = run[run.length - 1];
    if (interrupted || (previous && s.us - previous.us > 4 * INTERVAL_US)) close();
    run.push(s);
  }
  close();
  return stalls;
}

function shares(samples: Sample[], key: (s: Sample) => string, top = 8): string[] {
  const counts = new Map<string, number>();
  for (const s of samples) counts.set(key(s), (counts.get(key(s)) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, n]) => `${((100 * n) / Math.max(1, samples.length)).toFixed(1).padStart(5)} %  ${name}`);
}

/** The busy samples inside the given windows (each sample counted once). */
function within(samples: Sample[], windows: { dueUs: number; endUs: number }[]): Sample[] {
  const sorted = [...windows].sort((a, b) => a.dueUs - b.dueUs);
  const out: Sample[] = [];
  let w = 0;
  for (const s of samples) {
    while (w < sorted.length && (sorted[w]?.endUs ?? 0) < s.us) w++;
    // Windows overlap; any window from w on that started before s covers it.
    for (let k = w; k < sorted.length && (sorted[k]?.dueUs ?? 0) <= s.us; k++) {
      if ((sorted[k]?.endUs ?? 0) >= s.us) {
        out.push(s);
        break;
      }
    }
  }
  return out;
}

/** One collection from V8's `--trace-gc` line: its kind and its pause of the main thread. */
interface GcEvent {
  /** Start, on the profile's clock (µs): the line's time since the isolate started, plus the profile's start. */
  us: number;
  kind: string;
  pauseMs: number;
  /** A full collection's incremental marking steps on the main thread before its pause (V8's "+ x ms in n steps"). */
  stepsMs: number;
  /** Why V8 collected ("allocation failure", "finalize incremental marking via task", "external memory pressure"…). */
  reason: string;
}

// `[pid:0x…]     1234 ms: Scavenge 20.1 (30.2) -> 19.5 (30.2) MB, 1.20 / 0.00 ms  (average mu = …) allocation failure;`
// (Node 24 adds "pooled: … MB, " before the pause). The time is whole milliseconds since the isolate
// started, which is when the CPU profile starts too: lined up to within about a millisecond.
const GC_LINE =
  /^\[\d+:0x[0-9a-f]+\]\s+(\d+) ms: (.+?) [\d.]+ \([\d.]+\) -> [\d.]+ \([\d.]+\) MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms(?:\s+\(\+ ([\d.]+) ms in \d+ steps[^)]*\))?.*?current mu = [\d.]+\) ([^;]*)/;

function gcEventsOf(stdout: string, profileStartUs: number): GcEvent[] {
  const events: GcEvent[] = [];
  for (const line of stdout.split("\n")) {
    const m = GC_LINE.exec(line);
    if (m)
      events.push({
        us: profileStartUs + Number(m[1]) * 1000,
        kind: m[2] ?? "?",
        pauseMs: Number(m[3]),
        stepsMs: Number(m[4] ?? 0),
        reason: (m[5] ?? "").trim(),
      });
  }
  return events;
}

/** Per kind (and, for full collections, why): how many, their pauses' sum and longest. */
function gcByKind(events: GcEvent[], runS: number): string[] {
  const kinds = new Map<string, GcEvent[]>();
  const kindOf = (e: GcEvent) => (e.kind.startsWith("Scavenge") ? e.kind : `${e.kind}, ${e.reason}`);
  for (const e of events) kinds.set(kindOf(e), [...(kinds.get(kindOf(e)) ?? []), e]);
  return [...kinds.entries()]
    .sort((a, b) => b[1].length - a[1].length)
    .map(([kind, list]) => {
      const pauses = list.map((e) => e.pauseMs);
      const sum = pauses.reduce((a, b) => a + b, 0);
      const steps = list.reduce((a, e) => a + e.stepsMs, 0);
      return `${kind}: ${list.length} (${(list.length / runS).toFixed(1)}/s), pauses ${sum.toFixed(0)} ms in all, mean ${(sum / list.length).toFixed(2)} ms, longest ${Math.max(...pauses).toFixed(1)} ms${steps > 0 ? `; marking steps before them ${steps.toFixed(0)} ms` : ""}`;
    });
}

/** The collections that overlap [fromUs, toUs] (1 ms of slack for the trace's whole milliseconds). */
const gcIn = (events: GcEvent[], fromUs: number, toUs: number) =>
  events.filter((e) => e.us - 1000 <= toUs && e.us + e.pauseMs * 1000 + 1000 >= fromUs);

const latencies = (r: OpenLoopResult) =>
  `p50 ${r.p50Ms.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(1)} ms, p99.9 ${r.p99_9Ms.toFixed(1)} ms, longest ${r.maxMs.toFixed(1)} ms (${r.failed} failed)`;

const echoScenario = scenario("echo-200");
const chargeScenario = scenario("built-200");

const echo = await startScriptTarget("echo");
let echoResult: OpenLoopResult;
try {
  const request = steadyRequest(echoScenario, echo);
  await openLoop(request, RATE, WARMUP_SECONDS);
  echoResult = await openLoop(request, RATE, SECONDS);
} finally {
  await echo.stop();
}

const dir = mkdtempSync(join(tmpdir(), "payments-stalls-"));
// BENCH_NODE_FLAGS applies here as in `npm run bench`, so a heap setting can be compared on the stalls.
const built = await startBuiltTarget("built", [
  ...builtNodeFlags(),
  "--trace-gc",
  "--cpu-prof",
  `--cpu-prof-dir=${dir}`,
  `--cpu-prof-interval=${INTERVAL_US}`,
]);
let result: OpenLoopResult;
let profileFile: string;
let stdout = "";
try {
  await preflight(chargeScenario, built);
  const request = steadyRequest(chargeScenario, built);
  await openLoop(request, RATE, WARMUP_SECONDS);
  result = await openLoop(request, RATE, SECONDS, { windows: true });
  stdout = built.stdout?.() ?? "";
  await built.stop();
  const written = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
  if (!written) throw new Error(`the production build wrote no profile in ${dir}`);
  mkdirSync(join(RESULTS_DIR, "profiles"), { recursive: true });
  profileFile = join(RESULTS_DIR, "profiles", `stalls-${new Date().toISOString().replace(/[:.]/g, "-")}.cpuprofile`);
  renameSync(join(dir, written), profileFile);
} finally {
  await built.stop();
  rmSync(dir, { recursive: true, force: true });
}

const windows = result.windows ?? [];
const firstDue = Math.min(...windows.map((w) => w.dueUs));
const lastEnd = Math.max(...windows.map((w) => w.endUs));
const profile = readProfile(profileFile);
const all = samplesOf(profile);
const gcAll = gcEventsOf(stdout, profile.startTime).filter((e) => e.us >= firstDue && e.us <= lastEnd);
// Only the measured run: the profile also holds start-up and warm-up.
const samples = all.samples.filter((s) => s.us >= firstDue && s.us <= lastEnd);
const idleUs = all.idleUs.filter((us) => us >= firstDue && us <= lastEnd);
const stalls = stallsOf(samples, idleUs);
const slowest = [...windows]
  .sort((a, b) => b.endUs - b.dueUs - (a.endUs - a.dueUs))
  .slice(0, Math.max(1, Math.ceil(windows.length / 100)));
const inSlow = within(samples, slowest);
const inAll = within(samples, windows);
const stallSamples = stalls.flatMap((s) => s.samples);
const slowInStall = slowest.filter((w) => stalls.some((s) => s.startUs <= w.endUs && s.endUs >= w.dueUs)).length;
const runUs = lastEnd - firstDue;
const stallLengths = stalls.map((s) => (s.endUs - s.startUs) / 1000).sort((a, b) => b - a);

const gcInSlow = new Set(slowest.flatMap((w) => gcIn(gcAll, w.dueUs, w.endUs)));
const gcInStalls = new Set(stalls.flatMap((s) => gcIn(gcAll, s.startUs, s.endUs)));
const ratio = (a: number, b: number) => `${(a / b).toFixed(1)}×`;
const lines = [
  `bench:stalls: POST /v1/charges at ${RATE}/s open loop for ${SECONDS} s on the production build (1 worker, SQLite file, live key), CPU profile every ${INTERVAL_US} µs`,
  // Which Node and which heap: runs of different variants are compared side by side (issue 36).
  `  node ${process.version}; BENCH_NODE_FLAGS ${builtNodeFlags().join(" ") || "(none: the server sizes its heap itself)"}; the server's heap: ${heapNote(stdout)}`,
  `  echo:    ${latencies(echoResult)}`,
  `  charges: ${latencies(result)}`,
  `  against the echo: p99 ${ratio(result.p99Ms, echoResult.p99Ms)} (target ≤ 3×), p99.9 ${ratio(result.p99_9Ms, echoResult.p99_9Ms)} (≤ 4×), longest ${ratio(result.maxMs, echoResult.maxMs)} (≤ 5×)`,
  `  main thread busy ${((100 * samples.length * INTERVAL_US) / runUs).toFixed(1)} % of the run`,
  `  stalls (busy runs ≥ ${STALL_MS} ms): ${stalls.length}, ${(stalls.length / (runUs / 1e6)).toFixed(2)}/s; longest ${stallLengths
    .slice(0, 8)
    .map((ms) => ms.toFixed(1))
    .join(", ")} ms`,
  `  the slowest 1 % (${slowest.length} requests, ≥ ${((slowest[slowest.length - 1]?.endUs ?? 0) - (slowest[slowest.length - 1]?.dueUs ?? 0)) / 1000} ms): ${slowInStall} overlap a stall`,
  `  garbage collections (--trace-gc) during the run: ${gcAll.length}`,
  ...gcByKind(gcAll, runUs / 1e6).map((l) => `    ${l}`),
  `  … overlapping a stall: ${gcInStalls.size}`,
  ...gcByKind([...gcInStalls], runUs / 1e6).map((l) => `    ${l}`),
  `  … overlapping one of the slowest 1 %'s windows: ${gcInSlow.size}`,
  ...gcByKind([...gcInSlow], runUs / 1e6).map((l) => `    ${l}`),
  "  what the stalls were made of (top of stack):",
  ...shares(stallSamples, (s) => s.category).map((l) => `    ${l}`),
  "  what of ours was running in the stalls:",
  ...shares(stallSamples, (s) => s.ours).map((l) => `    ${l}`),
  "  the main thread inside the slowest 1 %'s windows (top of stack):",
  ...shares(inSlow, (s) => s.category).map((l) => `    ${l}`),
  "  … and inside every request's window:",
  ...shares(inAll, (s) => s.category).map((l) => `    ${l}`),
  "  what of ours was running inside the slowest 1 %'s windows:",
  ...shares(inSlow, (s) => s.ours, 12).map((l) => `    ${l}`),
  `  profile: ${profileFile}`,
];
console.log(lines.join("\n"));
writeFileSync(
  join(RESULTS_DIR, `stalls-${new Date().toISOString().replace(/[:.]/g, "-")}.json`),
  JSON.stringify(
    {
      rate: RATE,
      seconds: SECONDS,
      echo: { ...echoResult, windows: undefined },
      charges: { ...result, windows: undefined },
      gc: gcByKind(gcAll, runUs / 1e6),
      stalls: stalls.map((s) => ({
        ms: (s.endUs - s.startUs) / 1000,
        atS: (s.startUs - firstDue) / 1e6,
        made: shares(s.samples, (x) => x.category, 3),
        ours: shares(s.samples, (x) => x.ours, 3),
        gc: gcIn(gcAll, s.startUs, s.endUs).map((e) => `${e.kind} ${e.pauseMs} ms`),
      })),
    },
    null,
    2,
  ),
);
process.exit(result.failed + echoResult.failed === 0 ? 0 : 1);
