// `npm run bench:sandbox -w @payments/tests`: how long the embeddable sandbox takes to start, as an
// integrator's test suite starts it (startSandbox from @payments/client/sandbox; docs/testing-your-integration.md
// "A sandbox of your own in your tests"). A measurement, not a test.
//
// For each variant and round: the time from the call to the sandbox's URL and key (the server listens),
// to the first answered API request (GET /v1/merchants with the key), the CPU the sandbox process spent
// until then (/proc/<pid>/stat: a figure that a busy machine changes far less than the wall clock), and
// the time stop() takes. Medians over the rounds, and the load average, are printed. The built variant
// needs `npm run build` first.

import { existsSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
// The sources, as the other bench scripts run (tsx does not apply the @payments/source condition).
import { startSandbox } from "../../clients/typescript/src/sandbox.ts";

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const repository = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const TICKS_PER_SECOND = 100; // USER_HZ on Linux

function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command's closing parenthesis.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

const variants: Record<string, boolean> = { "sources (tsx)": false };
if (existsSync(resolve(repository, "server/dist/sandbox.js"))) variants["built (dist/sandbox.js)"] = true;
else console.log("server/dist/sandbox.js is missing: run `npm run build` to measure the built sandbox too.");

console.log(
  `load average before: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}; ${ROUNDS} rounds each`,
);
for (const [name, built] of Object.entries(variants)) {
  const rows: { ready: number; answer: number; cpu: number; stop: number }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const t0 = performance.now();
    const sandbox = await startSandbox({ repository, built });
    const ready = performance.now() - t0;
    const res = await fetch(`${sandbox.url}/v1/merchants`, { headers: { authorization: `Bearer ${sandbox.key}` } });
    if (res.status !== 200) throw new Error(`the sandbox answered ${res.status}`);
    const answer = performance.now() - t0;
    const cpu = cpuMs(sandbox.pid);
    const t1 = performance.now();
    await sandbox.stop();
    rows.push({ ready, answer, cpu, stop: performance.now() - t1 });
  }
  const m = (k: keyof (typeof rows)[number]) => Math.round(median(rows.map((r) => r[k])));
  console.log(
    `${name.padEnd(24)} URL and key ${m("ready")} ms, first answer ${m("answer")} ms, CPU ${m("cpu")} ms, stop ${m("stop")} ms (medians)`,
  );
}
console.log(
  `load average after: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
