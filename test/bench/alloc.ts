// `npm run bench:alloc -- [charges] [concurrency]` (issue 36, "allocation per charge"): how many bytes the
// production build allocates per POST /v1/charges, and which code allocates them. Young-generation
// garbage collections, the stalls' first named cause, come at a rate set by bytes allocated per
// request, and that figure hardly depends on the machine's load, so it can be measured while other
// work shares the cores (latency cannot).
//
// The build (one worker, SQLite file, production key, as bench:stalls runs it) takes a warm-up of
// charges, then `charges` more (default 2000), `concurrency` at a time (default 4: closed loop, so every
// charge is answered however loaded the machine is and the bytes divide by the charges made), under V8's
// sampling heap profiler (./targets/alloc-probe.cjs, loaded with `node --require`), which here also
// counts the objects already collected: the profile is every byte allocated during the run. Printed:
// bytes per charge (also less what the server allocates at rest over as long), then the allocation by
// module, by function (the frame that allocated), and by the nearest frame of our own code (which use
// case or middleware asked for it), each with its share.
// The profile (`.heapprofile`, for Chrome DevTools' Memory tab) is written to test/bench/results/.

import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type CallFrame, moduleOf, original, shortFile } from "./cpuprofile.ts";
import { builtNodeFlags, startBuiltTarget } from "./launch.ts";
import { preflight, steadyRequest } from "./load.ts";
import type { OpenLoopRequest } from "./open-loop.ts";
import { SCENARIOS } from "./scenarios.ts";

const CHARGES = Number(process.argv[2] ?? 2000);
const CONCURRENCY = Number(process.argv[3] ?? 4);
const WARMUP_CHARGES = 500;
const IDLE_SECONDS = 10;
const RESULTS_DIR = fileURLToPath(new URL("./results/", import.meta.url));
const PROBE = fileURLToPath(new URL("./targets/alloc-probe.cjs", import.meta.url));

if (!Number.isInteger(CHARGES) || CHARGES < 1 || !Number.isInteger(CONCURRENCY) || CONCURRENCY < 1) {
  console.error("usage: npm run bench:alloc -- [charges] [concurrency]; both whole numbers of at least 1");
  process.exit(2);
}

interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  children: HeapNode[];
}

/** Our frames that say only how work is run (as in ./stalls.ts): skipped when naming who asked. */
const PLUMBING = /\/server\/src\/(store\/|http\/handlers\.ts|domain\/kernel\/)/;

function sorted(map: Map<string, number>, total: number, top: number): string[] {
  return [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, bytes]) => `${((100 * bytes) / total).toFixed(1).padStart(5)} %  ${name}`);
}

/** Bytes by module, by allocating function, and by the nearest frame of ours on the stack. */
function attribute(head: HeapNode) {
  const byModule = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const byOurs = new Map<string, number>();
  let total = 0;
  const add = (map: Map<string, number>, key: string, bytes: number) => map.set(key, (map.get(key) ?? 0) + bytes);
  const walk = (node: HeapNode, ours: string) => {
    const frame = original(node.callFrame);
    const name =
      frame.url === ""
        ? frame.functionName || "(anonymous)"
        : `${frame.functionName || "(anonymous)"} (${shortFile(frame.url)}:${frame.lineNumber + 1})`;
    const mine = /\/server\/src\//.test(frame.url) && !PLUMBING.test(frame.url) ? name : ours;
    if (node.selfSize > 0) {
      total += node.selfSize;
      add(byModule, moduleOf(frame.url, frame.functionName), node.selfSize);
      add(byFunction, name, node.selfSize);
      add(byOurs, mine, node.selfSize);
    }
    for (const child of node.children) walk(child, mine);
  };
  walk(head, "(not under our code)");
  return { total, byModule, byFunction, byOurs };
}

/** Sends `count` requests, `concurrency` at a time; answers by status. */
async function closedLoop(req: OpenLoopRequest, count: number, concurrency: number): Promise<Record<string, number>> {
  const url = new URL(req.url);
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const body = Buffer.from(req.body ?? "");
  const headers = { ...req.headers, "Content-Length": String(body.length) };
  const statuses: Record<string, number> = {};
  let sent = 0;
  const one = () =>
    new Promise<void>((resolve) => {
      const r = httpRequest(
        { agent, host: url.hostname, port: url.port, path: url.pathname, method: req.method, headers },
        (res) => {
          res.resume();
          res.on("end", () => {
            const status = String(res.statusCode);
            statuses[status] = (statuses[status] ?? 0) + 1;
            resolve();
          });
        },
      );
      r.on("error", (error: NodeJS.ErrnoException) => {
        statuses[error.code ?? "error"] = (statuses[error.code ?? "error"] ?? 0) + 1;
        resolve();
      });
      r.end(body);
    });
  const lane = async () => {
    while (sent < count) {
      sent++;
      await one();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  agent.destroy();
  return statuses;
}

/** The profile the probe writes to `file`, once it is there. */
async function profileAt(file: string): Promise<HeapNode> {
  for (const deadline = Date.now() + 60_000; !existsSync(file) && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  const profile = JSON.parse(readFileSync(file, "utf8")) as { head?: HeapNode; error?: string };
  if (!profile.head) throw new Error(`the sampling heap profiler failed: ${profile.error}`);
  return profile.head;
}

const found = SCENARIOS.find((s) => s.id === "built-200");
if (!found) throw new Error("no built-200 scenario in ./scenarios.ts");
const scenario = found;
const dir = join(tmpdir(), `payments-alloc-${process.pid}`);
mkdirSync(dir, { recursive: true });
const out = join(dir, "charges.heapprofile");
const built = await startBuiltTarget("built", [...builtNodeFlags(), `--require=${PROBE}`], { ALLOC_OUT: out });
let code = 1;
try {
  const [pid] = built.pids();
  if (pid === undefined) throw new Error("the production build has no process id");
  await preflight(scenario, built);
  const request = steadyRequest(scenario, built);
  await closedLoop(request, WARMUP_CHARGES, CONCURRENCY);
  // First the server at rest for IDLE_SECONDS: what its timers (the outbox, housekeeping) allocate
  // a second, which a charge run on a loaded machine would otherwise charge to its longer duration.
  process.kill(pid, "SIGUSR2");
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  process.kill(pid, "SIGUSR2");
  const idle = await profileAt(`${out}.1`);
  process.kill(pid, "SIGUSR2");
  const started = performance.now();
  const statuses = await closedLoop(request, CHARGES, CONCURRENCY);
  const seconds = (performance.now() - started) / 1000;
  process.kill(pid, "SIGUSR2");
  const profile = await profileAt(`${out}.2`);
  const { total, byModule, byFunction, byOurs } = attribute(profile);
  const idleRate = attribute(idle).total / IDLE_SECONDS;
  const charges = statuses["201"] ?? 0;
  const failed = CHARGES - charges;
  console.log(
    `${scenario.name.replace(/ at \d+\/s/, "")}: ${CHARGES} charges, ${CONCURRENCY} at a time, in ${seconds.toFixed(1)} s; answers ${JSON.stringify(statuses)}`,
  );
  console.log(
    `allocated ${(total / 2 ** 20).toFixed(1)} MB in all: ${Math.round(total / Math.max(1, charges) / 1024)} KB per charge; ` +
      `at rest the server allocates ${Math.round(idleRate / 1024)} KB/s, so the charges' own: ` +
      `${Math.round((total - idleRate * seconds) / Math.max(1, charges) / 1024)} KB per charge`,
  );
  console.log("by module:");
  for (const line of sorted(byModule, total, 12)) console.log(`  ${line}`);
  console.log("by allocating function:");
  for (const line of sorted(byFunction, total, 25)) console.log(`  ${line}`);
  console.log("by the nearest frame of our own code:");
  for (const line of sorted(byOurs, total, 25)) console.log(`  ${line}`);
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `alloc-${new Date().toISOString().replace(/[:.]/g, "-")}.heapprofile`);
  renameSync(`${out}.2`, file);
  console.log(`Profile: ${file}`);
  code = failed === 0 ? 0 : 1;
} finally {
  await built.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
