import { createServer } from "node:http";
import { recordEvent } from "@payments/server";
import { startTestServer } from "/work/wt/webhooks/test/support/server.ts";

let n = 0;
let last = 0;
const recv = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    n++;
    last = performance.now();
    res.end("ok");
  });
});
await new Promise<void>((r) => recv.listen(0, "127.0.0.1", r));
const s = await startTestServer({
  VALIDATE_RESPONSES: "false",
  WEBHOOK_CONCURRENCY: process.env.C ?? "50",
  WEBHOOK_ENDPOINT_CONCURRENCY: process.env.EC ?? "10",
});
await fetch(s.url + "/v1/webhook_endpoints", {
  method: "POST",
  headers: { authorization: `Bearer ${s.sandboxKey}`, "content-type": "application/json" },
  body: JSON.stringify({ url: `http://127.0.0.1:${(recv.address() as any).port}/h`, enabled_events: ["*"] }),
});
const N = 5000;
const t0 = performance.now();
for (let d = 0; d < N; d += 100)
  await s.running.store.transaction(async (tx) => {
    for (let i = 0; i < 100; i++) await recordEvent(tx, () => new Date(), false, "payment.captured", { tx_id: "tx_x" });
  });
const t1 = performance.now();
while (n < N) await new Promise((r) => setTimeout(r, 20));
console.log(
  `insert ${(t1 - t0).toFixed(0)} ms, total ${(last - t0).toFixed(0)} ms, ${(N / ((last - t0) / 1000)).toFixed(0)}/s`,
);
await s.close();
recv.close();
