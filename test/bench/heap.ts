// `npm run bench:heap -- [seconds]`: what holds the production build's memory under load. The built
// server (its SQLite file, one worker) takes POST /v1/charges at saturation for the given seconds
// (default 20) after a warm-up; its peak RSS is the kernel's own high-water mark (VmHWM), and its
// memory at the end of the load is split as the kernel sees it (smaps_rollup: anonymous memory, that
// is the heaps, against mapped files such as the node binary) and as V8 sees it: a heap snapshot,
// taken the moment the load ends, summed per kind of object (code, strings, arrays, closures, objects
// by constructor), beside V8's committed heap per space from the server's metrics. Node flags given
// after the seconds are passed to the server, to try a setting: `npm run bench:heap -- 20
// --max-semi-space-size=4`. The snapshot is written to test/bench/results/profiles/ for Chrome DevTools'
// Memory tab, which also gives retained sizes. Linux only (/proc).

import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, heapNote, startBuiltTarget } from "./launch.ts";
import { failures, load, preflight } from "./load.ts";
import { SCENARIOS } from "./scenarios.ts";

const WARMUP_SECONDS = 2;
const PROFILES_DIR = fileURLToPath(new URL("./results/profiles/", import.meta.url));
const MB = 1024 * 1024;

const [secondsArg, ...nodeFlags] = process.argv.slice(2);
const seconds = secondsArg === undefined ? 20 : Number(secondsArg);
if (!Number.isInteger(seconds) || seconds < 1 || nodeFlags.some((flag) => !flag.startsWith("--"))) {
  console.error(
    "usage: npm run bench:heap -- [seconds] [node flags to try, such as --max-semi-space-size=4]; seconds must be a whole number of at least 1",
  );
  process.exit(2);
}
const scenario = SCENARIOS.find((s) => s.id === "built-charges");
if (!scenario) throw new Error("no built-charges scenario in scenarios.ts");

/** The kB figures of a /proc status-like file, by field name. */
function kbFields(file: string): Map<string, number> {
  const fields = new Map<string, number>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const match = /^(\w+):\s+(\d+) kB/.exec(line);
    if (match?.[1] && match[2]) fields.set(match[1], Number(match[2]));
  }
  return fields;
}

/** Waits until the snapshot file exists and has stopped growing (V8 writes it in one go, then closes it). */
async function snapshotIn(dir: string): Promise<string> {
  let last = -1;
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
    const name = readdirSync(dir).find((f) => f.endsWith(".heapsnapshot"));
    if (name) {
      const size = statSync(join(dir, name)).size;
      if (size > 0 && size === last) return join(dir, name);
      last = size;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`no heap snapshot appeared in ${dir}`);
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Self sizes summed per node type, and per constructor name among objects. */
function summarize(file: string): { total: number; byType: [string, number][]; byName: [string, number, number][] } {
  const heap = JSON.parse(readFileSync(file, "utf8")) as Snapshot;
  const fields = heap.snapshot.meta.node_fields;
  const width = fields.length;
  const typeAt = fields.indexOf("type");
  const nameAt = fields.indexOf("name");
  const sizeAt = fields.indexOf("self_size");
  const types = heap.snapshot.meta.node_types[0];
  const byType = new Map<string, number>();
  const byName = new Map<string, [number, number]>();
  let total = 0;
  for (let i = 0; i < heap.nodes.length; i += width) {
    const type = types[heap.nodes[i + typeAt] ?? 0] ?? "?";
    const size = heap.nodes[i + sizeAt] ?? 0;
    total += size;
    byType.set(type, (byType.get(type) ?? 0) + size);
    if (type === "object" || type === "closure" || type === "native") {
      const name = `${type === "object" ? "" : `(${type}) `}${heap.strings[heap.nodes[i + nameAt] ?? 0] ?? "?"}`;
      const entry = byName.get(name) ?? [0, 0];
      entry[0] += size;
      entry[1] += 1;
      byName.set(name, entry);
    }
  }
  return {
    total,
    byType: [...byType].sort((a, b) => b[1] - a[1]),
    byName: [...byName]
      .map(([name, [size, count]]) => [name, size, count] as [string, number, number])
      .sort((a, b) => b[1] - a[1])
      .slice(0, 20),
  };
}

const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
const dir = mkdtempSync(join(tmpdir(), "payments-heap-"));
const metricsPort = await freePort();
const target = await startBuiltTarget(
  "built",
  [...nodeFlags, "--heapsnapshot-signal=SIGUSR2", `--diagnostic-dir=${dir}`],
  { METRICS_PORT: String(metricsPort) },
);

/** V8's own figures from the server's metrics (prom-client's default metrics): bytes, by metric and space. */
async function v8Figures(): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const figures = new Map<string, number>();
  for (const match of text.matchAll(
    /^(nodejs_(?:heap_\w+|external_memory_bytes))(?:\{space="(\w+)"\})? (\d+(?:\.\d+)?(?:e\+\d+)?)$/gm,
  )) {
    figures.set(match[2] ? `${match[1]}:${match[2]}` : (match[1] ?? ""), Number(match[3]));
  }
  return figures;
}
let code = 1;
try {
  const [pid] = target.pids();
  if (pid === undefined) throw new Error("the production build has no process id");
  const idle = kbFields(`/proc/${pid}/status`).get("VmRSS") ?? 0;
  await preflight(scenario, target);
  const warmup = await load(scenario, target, WARMUP_SECONDS);
  const result = await load(scenario, target, seconds);
  const status = kbFields(`/proc/${pid}/status`);
  const rollup = existsSync(`/proc/${pid}/smaps_rollup`) ? kbFields(`/proc/${pid}/smaps_rollup`) : new Map();
  const v8 = await v8Figures();
  process.kill(pid, "SIGUSR2");
  const written = await snapshotIn(dir);
  mkdirSync(PROFILES_DIR, { recursive: true });
  const file = `${PROFILES_DIR}built-charges-${new Date().toISOString().replace(/[:.]/g, "-")}.heapsnapshot`;
  renameSync(written, file);
  const heap = summarize(file);
  const kb = (name: string, from = status) => mb((from.get(name) ?? 0) * 1024);
  console.log(
    `${scenario.name}: ${result.requests.average.toFixed(0)} req/s over ${seconds} s, ${failures(result, scenario) + failures(warmup, scenario)} failed`,
  );
  // Which Node and which heap, so that runs of different variants can be told apart (issue 36).
  console.log(
    `node ${process.version}; flags ${nodeFlags.join(" ") || "(none)"}; the server's heap: ${heapNote(target.stdout?.() ?? "")}`,
  );
  console.log(
    `RSS: ${mb(idle * 1024)} started and idle, peak ${kb("VmHWM")} (VmHWM), ${kb("VmRSS")} when the load ended`,
  );
  if (rollup.size > 0) {
    console.log(
      `  of which anonymous (heaps, native allocations) ${kb("Anonymous", rollup)}, mapped files ${mb(((rollup.get("Rss") ?? 0) - (rollup.get("Anonymous") ?? 0)) * 1024)}`,
    );
  }
  const spaces = [...v8].filter(([name]) => name.startsWith("nodejs_heap_space_size_total_bytes:"));
  console.log(
    `V8 heap committed ${mb(v8.get("nodejs_heap_size_total_bytes") ?? 0)}, used ${mb(v8.get("nodejs_heap_size_used_bytes") ?? 0)}, ` +
      `external ${mb(v8.get("nodejs_external_memory_bytes") ?? 0)}; committed by space: ` +
      spaces.map(([name, bytes]) => `${name.split(":")[1]} ${mb(bytes)}`).join(", "),
  );
  console.log(`V8 heap in the snapshot (live objects after the full GC a snapshot makes): ${mb(heap.total)}`);
  for (const [type, size] of heap.byType.slice(0, 10)) console.log(`  ${type.padEnd(18)} ${mb(size).padStart(9)}`);
  console.log("Largest kinds of object (self size, count):");
  for (const [name, size, count] of heap.byName) {
    console.log(`  ${name.slice(0, 48).padEnd(48)} ${mb(size).padStart(9)} ${String(count).padStart(8)}`);
  }
  console.log(`Snapshot: ${file}`);
  code = failures(result, scenario) + failures(warmup, scenario) === 0 ? 0 : 1;
} finally {
  await target.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
