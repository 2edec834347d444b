// `npm run bench:startup -w @payments/tests`: start-up time and memory of the production build
// (`node server/dist/main.js`) against the TypeScript sources run through tsx's loader in the same
// process (`node --import tsx server/src/main.ts`, what `npm start` does in development). A
// measurement, not a test (docs/operating.md "Production"); build first with `npm run build`.
//
// For each variant and round: spawn with NODE_ENV=production on a fresh data directory, poll
// GET /healthz every 5 ms from the moment of the spawn until it answers 200 (the start-up time, wall
// clock) and read the CPU the process had used by then (user + system, /proc/<pid>/stat: on Node 24 the
// heap's re-exec keeps the process id, so it is counted), then send 200 requests (GET /readyz, POST
// /v1/merchants), read VmRSS and VmHWM from /proc/<pid>/status, and SIGKILL it, as the crash suites
// stop it (so nothing a clean exit would write, such as Node's compile cache, is written then). Medians
// over the rounds are printed, and the first round apart (a start with nothing cached beside the build).
// CPU to first answer is the figure to compare on a loaded machine: wall time waits for other work.
//
// BENCH_NODE=<path to node> runs the servers on that Node (the tsx variant too); BENCH_ROUNDS=<n>
// (default 5); BENCH_VARIANTS=built (or tsx) runs one variant only.

import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const NODE = process.env.BENCH_NODE ?? process.execPath;
const server = resolve(dirname(fileURLToPath(import.meta.url)), "../../server");
const allVariants = {
  built: { label: "built (node dist/main.js)", args: ["dist/main.js"] },
  tsx: { label: "tsx (node --import tsx src/main.ts)", args: ["--import", "tsx", "src/main.ts"] },
};
const chosen = (process.env.BENCH_VARIANTS ?? "built,tsx").split(",");
const variants = Object.entries(allVariants).filter(([name]) => chosen.includes(name));
/** Clock ticks per second of /proc/<pid>/stat's CPU times (`getconf CLK_TCK`: 100 on Linux). */
const CLOCK_TICKS = 100;

function freePort(): Promise<number> {
  return new Promise((done) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const address = s.address();
      s.close(() => done(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** CPU time (user + system) the process has used so far, in ms, from /proc/<pid>/stat. */
function cpuMs(pid: number): number {
  // The fields after the command name, which is in parentheses and may hold spaces.
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

function status(pid: number, field: "VmRSS" | "VmHWM"): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"));
  return Number(line?.[1] ?? 0) / 1024;
}

async function once(args: string[]) {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), "payments-startup-bench-"));
  const started = performance.now();
  const child = spawn(NODE, args, {
    cwd: server,
    stdio: ["ignore", "pipe", "inherit"],
    env: {
      PATH: process.env.PATH,
      NODE_ENV: "production",
      PORT: String(port),
      DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
      VAULT_MASTER_KEY: Buffer.alloc(32, 1).toString("base64"),
      VAULT_FINGERPRINT_KEY: Buffer.alloc(32, 2).toString("base64"),
      // 100 writes as fast as they go: a start-up measurement, not a test of the sandbox's rate limit.
      RATE_LIMIT_TEST_PER_SECOND: "1000000",
      // No .env of the developer's: INIT_CWD points at the fresh directory (src/env-file.ts).
      INIT_CWD: dataDir,
    },
  });
  let out = "";
  child.stdout?.on("data", (chunk) => {
    out += chunk;
  });
  const url = `http://127.0.0.1:${port}`;
  let startupMs = 0;
  let startupCpuMs = 0;
  for (;;) {
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.status === 200) {
        startupMs = performance.now() - started;
        startupCpuMs = cpuMs(child.pid as number);
        break;
      }
    } catch {
      // not listening yet
    }
    if (performance.now() - started > 60_000) throw new Error("no answer within 60 s");
    await new Promise((r) => setTimeout(r, 5));
  }
  const rssAtStart = status(child.pid as number, "VmRSS");
  const key = out.match(/key_test_[0-9A-Za-z]{32}/)?.[0];
  for (let i = 0; i < 100; i++) {
    await (await fetch(`${url}/readyz`)).text();
    const res = await fetch(`${url}/v1/merchants`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ name: `Bench ${i}` }),
    });
    if (res.status !== 201) throw new Error(`POST /v1/merchants: ${res.status}`);
    await res.text();
  }
  const rssAfter = status(child.pid as number, "VmRSS");
  const peak = status(child.pid as number, "VmHWM");
  child.kill("SIGKILL");
  await new Promise((r) => child.once("exit", r));
  rmSync(dataDir, { recursive: true, force: true });
  return { startupMs, startupCpuMs, rssAtStart, rssAfter, peak };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

if (!existsSync(join(server, "dist/main.js"))) {
  console.error("server/dist/main.js is missing: run `npm run build` first.");
  process.exit(1);
}
const nodeVersion = execFileSync(NODE, ["--version"], { encoding: "utf8" }).trim();
console.log(`Node ${nodeVersion}; median of ${ROUNDS} rounds (first round apart); RSS in MiB`);
console.log(
  "variant | wall to first answer | CPU to first answer | first round: wall / CPU | RSS after start | RSS after 200 requests | peak RSS",
);
for (const [, { label, args }] of variants) {
  const runs: Awaited<ReturnType<typeof once>>[] = [];
  for (let i = 0; i < ROUNDS; i++) runs.push(await once(args));
  const m = (k: keyof (typeof runs)[number]) => median(runs.map((r) => r[k]));
  const first = runs[0];
  console.log(
    `${label} | ${m("startupMs").toFixed(0)} ms | ${m("startupCpuMs").toFixed(0)} ms | ${first?.startupMs.toFixed(0)} / ${first?.startupCpuMs.toFixed(0)} ms | ${m("rssAtStart").toFixed(0)} | ${m("rssAfter").toFixed(0)} | ${m("peak").toFixed(0)}`,
  );
}
