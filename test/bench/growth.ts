// `npm run bench:growth -w @payments/tests -- [charges]` (issue 36, "flat as the data grows"): does the
// production build cost the same with a million charges in its store as with none? One build (1 worker,
// SQLite file, live key, as `npm run bench` runs it) on a fresh data directory:
//
// 1. empty store: each list and filter an integrator or the console uses, answered one at a time
//    (LIST_ROUNDS each, p50), and POST /v1/charges at RATE/s open loop (p50/p99/p99.9/max);
// 2. the load: `charges` production charges (default 1,000,000) at saturation in ten parts (autocannon, 50
//    connections), spread over MERCHANTS merchants, one in a hundred authorized for a later capture (a
//    rare status), with a refund for one in fifty; each part's throughput is printed as it ends;
// 3. the full store: the same lists, the same open-loop run, and the bytes on disk per charge (the
//    SQLite file and its write-ahead log; `npm run bench:storage` splits them by table and index).
//
// Printed against the issue's bounds: saturation throughput over the last tenth ≥ 85 % of the first's,
// open-loop p99 within 1.3× of the empty store's, every list within 1.5× of its empty-store time. A
// measurement, not a test: it fails only when a request failed. Run it on an otherwise idle machine;
// a million charges takes about half an hour here and about 8 GB of disk under the system's temp dir.

import { readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { startBuiltTarget } from "./launch.ts";
import { CONNECTIONS } from "./load.ts";
import { type OpenLoopResult, openLoop } from "./open-loop.ts";
import { TOKEN_BODY } from "./targets/protocol.ts";

const CHARGES = Number(process.argv[2] ?? 1_000_000);
const PARTS = 10;
const MERCHANTS = 20;
const RATE = 150;
const RATE_SECONDS = 30;
const WARM_UP_SECONDS = 10;
const LIST_ROUNDS = 25;
const RESULTS_DIR = fileURLToPath(new URL("./results/", import.meta.url));

if (!Number.isInteger(CHARGES) || CHARGES < PARTS * 100) {
  console.error(`usage: npm run bench:growth -w @payments/tests -- [charges]; at least ${PARTS * 100}`);
  process.exit(2);
}

// Captures are available at once, so refunds are never refused for the balance (production waits two
// days by default: docs/money.md).
const target = await startBuiltTarget("built", [], { SETTLEMENT_DELAY_SECONDS: "0" });
const live = target.ready.live;
if (!live) throw new Error("the production build gave no production key");
const url = target.ready.url;
const headers = { Authorization: `Bearer ${live.key}`, "Content-Type": "application/json" };

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${url}${path}`, { method, headers, body: body === undefined ? null : JSON.stringify(body) });
  const json: unknown = await res.json().catch(() => null);
  return { status: res.status, json };
}

function idOf(json: unknown): string {
  const id = typeof json === "object" && json !== null && "id" in json ? json.id : undefined;
  if (typeof id !== "string") throw new Error(`no id in ${JSON.stringify(json)}`);
  return id;
}

const merchants: string[] = [live.merchantId];
for (let i = 1; i < MERCHANTS; i++) {
  const created = await call("POST", "/v1/merchants", { name: `Growth Merchant ${i}` });
  merchants.push(idOf(created.json));
}
const token = idOf((await call("POST", "/v1/tokens", TOKEN_BODY)).json);
const chargeFor = (n: number) => ({
  merchant_id: merchants[n % MERCHANTS],
  amount: 1000 + (n % 5000),
  currency: "USD",
  payment_method: { type: "card", token },
  ...(n % 100 === 7 ? { capture: false } : {}),
});

/** The lists and filters of issue 36's bound, each as an integrator or the console sends it. */
function lists(): { name: string; path: string }[] {
  const m = merchants[3];
  const day = new Date(Date.now() - 3600_000).toISOString();
  return [
    { name: "charges, newest first", path: "/v1/charges?limit=10" },
    { name: "charges of a merchant", path: `/v1/charges?merchant_id=${m}&limit=10` },
    { name: "charges, a rare status", path: "/v1/charges?status=authorized&limit=10" },
    { name: "events of a type", path: "/v1/events?type=payment.refunded&limit=10" },
    { name: "events, newest first", path: "/v1/events?limit=10" },
    { name: "request log", path: "/v1/request_log?limit=10" },
    { name: "request log, failed requests", path: "/v1/request_log?outcome=failed&limit=10" },
    { name: "balance transactions of a merchant", path: `/v1/balance_transactions?merchant_id=${m}&limit=10` },
    { name: "balance transactions, refunds", path: "/v1/balance_transactions?type=refund&limit=10" },
    {
      name: "balance transactions, created range",
      path: `/v1/balance_transactions?created_gte=${encodeURIComponent(day)}&limit=10`,
    },
    { name: "a merchant's balance", path: `/v1/merchants/${m}/balance` },
    { name: "fraud evaluations, blocked", path: "/v1/fraud/evaluations?decision=block&limit=10" },
  ];
}

async function timeLists(): Promise<Map<string, number>> {
  const p50s = new Map<string, number>();
  for (const { name, path } of lists()) {
    const times: number[] = [];
    for (let i = 0; i < LIST_ROUNDS; i++) {
      const started = performance.now();
      const { status } = await call("GET", path);
      times.push(performance.now() - started);
      if (status !== 200) throw new Error(`${name}: GET ${path} answered ${status}`);
    }
    times.sort((a, b) => a - b);
    p50s.set(name, times[Math.floor(times.length / 2)] ?? Number.NaN);
  }
  return p50s;
}

function steady(): Promise<OpenLoopResult> {
  return openLoop(
    { url: `${url}/v1/charges`, method: "POST", headers, body: JSON.stringify(chargeFor(1)) },
    RATE,
    RATE_SECONDS,
  );
}

function diskBytes(): number {
  const dir = join(target.dataDir ?? "", "data");
  return readdirSync(dir)
    .filter((f) => f.startsWith("payments.sqlite"))
    .reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
}

let failed = 0;
/** Charges sent by the load (the next one's number). */
let next = 0;
/** Charges the open-loop runs added (they weigh on the disk too). */
let steadyCharges = 0;
const refundable: string[] = [];

/** One part of the load at saturation: `count` charges, then a refund for one in fifty of them. */
async function part(count: number): Promise<number> {
  const first = next;
  next += count;
  let sent = first;
  const result = await autocannon({
    url: `${url}/v1/charges`,
    connections: CONNECTIONS,
    amount: count,
    timeout: 10,
    requests: [
      {
        method: "POST",
        headers,
        setupRequest: (req) => ({ ...req, body: JSON.stringify(chargeFor(sent++)) }),
        onResponse: (status, body) => {
          if (status !== 201 || refundable.length > 1000) return;
          if (Math.random() < 0.02) refundable.push(idOf(JSON.parse(body)));
        },
      },
    ],
  });
  failed += result.non2xx + result.errors + result.timeouts;
  const seconds = result.duration;
  while (refundable.length > 0) {
    const batch = refundable.splice(0, 10);
    await Promise.all(
      batch.map(async (id) => {
        const { status } = await call("POST", `/v1/charges/${id}/refunds`, { amount: 100 });
        // A charge the fraud engine blocked or that was only authorized has nothing to refund (409).
        if (status !== 201 && status !== 409) failed++;
      }),
    );
  }
  return count / seconds;
}

const row = (r: OpenLoopResult) =>
  `p50 ${r.p50Ms.toFixed(1)} / p99 ${r.p99Ms.toFixed(1)} / p99.9 ${r.p99_9Ms.toFixed(1)} / max ${r.maxMs.toFixed(1)} ms`;

let exitCode = 1;
try {
  console.log(
    `bench:growth: ${CHARGES} production charges over ${MERCHANTS} merchants on the production build (1 worker, SQLite file)`,
  );
  // A warm-up at the same rate first: the empty store's run is the process's first load, and without it
  // the JIT's first minutes land in the empty store's tail (p99 95-127 ms against ~30 warm, Node 24).
  const warmUp = await openLoop(
    { url: `${url}/v1/charges`, method: "POST", headers, body: JSON.stringify(chargeFor(1)) },
    RATE,
    WARM_UP_SECONDS,
  );
  failed += warmUp.failed;
  steadyCharges += warmUp.ok;
  const emptyLists = await timeLists();
  const emptySteady = await steady();
  failed += emptySteady.failed;
  steadyCharges += emptySteady.ok;
  console.log(`  empty store: ${RATE}/s open loop ${row(emptySteady)}`);
  const rates: number[] = [];
  for (let i = 0; i < PARTS; i++) {
    const perSecond = await part(Math.floor(CHARGES / PARTS));
    rates.push(perSecond);
    console.log(
      `  part ${i + 1}/${PARTS}: ${next} charges, ${perSecond.toFixed(0)}/s, ${(diskBytes() / next).toFixed(0)} B on disk per charge`,
    );
  }
  const fullLists = await timeLists();
  const fullSteady = await steady();
  failed += fullSteady.failed;
  steadyCharges += fullSteady.ok;
  const bytes = diskBytes();
  const firstRate = rates[0] ?? Number.NaN;
  const lastRate = rates[rates.length - 1] ?? Number.NaN;
  const lines = [
    `  full store: ${RATE}/s open loop ${row(fullSteady)}`,
    `  saturation: first tenth ${firstRate.toFixed(0)}/s, last tenth ${lastRate.toFixed(0)}/s: ${((100 * lastRate) / firstRate).toFixed(1)} % (bound ≥ 85 %)`,
    `  open-loop p99: ${(fullSteady.p99Ms / emptySteady.p99Ms).toFixed(2)}× the empty store's (bound ≤ 1.3×)`,
    `  on disk: ${(bytes / 1e6).toFixed(0)} MB, ${(bytes / (next + steadyCharges)).toFixed(0)} B per charge (target ≤ 3,000)`,
    "  lists and filters, p50 of one at a time (bound ≤ 1.5× the empty store's):",
    ...lists().map(({ name }) => {
      const before = emptyLists.get(name) ?? Number.NaN;
      const after = fullLists.get(name) ?? Number.NaN;
      return `    ${(after / before).toFixed(2).padStart(5)}×  ${name}: ${before.toFixed(2)} → ${after.toFixed(2)} ms`;
    }),
    `  ${failed} failed${failed > 0 ? ` (open loop: ${JSON.stringify(emptySteady.statusCodes)} then ${JSON.stringify(fullSteady.statusCodes)})` : ""}`,
  ];
  console.log(lines.join("\n"));
  writeFileSync(
    join(RESULTS_DIR, `growth-${new Date().toISOString().replace(/[:.]/g, "-")}.json`),
    JSON.stringify(
      {
        charges: next,
        rates,
        emptySteady,
        fullSteady,
        bytes,
        lists: Object.fromEntries(lists().map(({ name }) => [name, [emptyLists.get(name), fullLists.get(name)]])),
        failed,
      },
      null,
      2,
    ),
  );
  exitCode = failed === 0 ? 0 : 1;
} finally {
  await target.stop();
}
process.exit(exitCode);
