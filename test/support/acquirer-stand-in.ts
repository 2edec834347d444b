import { createServer, type IncomingMessage } from "node:http";
import { createSimulatorProcessor } from "@payments/server";

// The acquirer simulator as a process of its own, for the crash tests (test/crash/acquirer-crash.test.ts):
// the server reaches it through TEST_ACQUIRER_URL (server/src/adapters/processor-http.ts), and what it
// applied, counted per idempotency key and per object, outlives every server it kills.
//
// - POST /<call> (authorizeCard, capture, void, refund, reverse, startLocalPayment): the port's request
//   as JSON; answers the port's answer (500 with the reason when the simulator refuses it).
// - GET /_counts: SimulatorCounts.
// - POST /_arm {"pid": n, "afterCalls": k}: after the k-th call from now that the simulator applies or
//   repeats, the process group `pid` is killed with SIGKILL before the answer is sent, and the
//   connection is dropped: the acquirer did it, the server never heard.
// Run: node --import tsx test/support/acquirer-stand-in.ts; it prints `listening <url>` once ready.

const simulator = createSimulatorProcessor({ count: true });
const calls: Record<string, (request: never) => Promise<unknown>> = {
  authorizeCard: simulator.authorizeCard,
  capture: simulator.capture,
  void: simulator.void,
  refund: simulator.refund,
  reverse: simulator.reverse,
  startLocalPayment: simulator.startLocalPayment,
  authenticateCard: simulator.authenticateCard,
  completeChallenge: simulator.completeChallenge,
};
let armed: { pid: number; left: number } | null = null;
let kills = 0;

async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown>;
}

const server = createServer(async (req, res) => {
  const name = (req.url ?? "/").slice(1);
  const reply = (status: number, value: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(value));
  };
  try {
    if (req.method === "GET" && name === "_counts") return reply(200, { ...simulator.counts(), kills });
    const request = await body(req);
    if (name === "_arm") {
      armed = { pid: Number(request.pid), left: Number(request.afterCalls) };
      return reply(200, { armed: true });
    }
    const call = calls[name];
    if (!call) return reply(404, { error: `no call ${name}` });
    if (typeof request.now === "string") request.now = new Date(request.now);
    const answer = await call(request as never);
    if (armed && --armed.left <= 0) {
      const { pid } = armed;
      armed = null;
      kills++;
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // already gone
      }
      res.socket?.destroy();
      return;
    }
    return reply(200, answer);
  } catch (err) {
    return reply(500, { error: (err as Error).message });
  }
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address() as { port: number };
  process.stdout.write(`listening http://127.0.0.1:${address.port}\n`);
});
