// Benchmark baseline for the steady-rate scenarios: a bare node:http server that answers every request
// with its own body, on a random loopback port. What the open-loop sender and the machine cost at a
// given rate when the server does next to nothing: the floor of every latency measured at that rate.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { exitWithParent, profileOnRequest, type ReadyMessage } from "./protocol.ts";

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    res.writeHead(200, { "Content-Type": "application/json", "Content-Length": body.length });
    res.end(body);
  });
});
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  const ready: ReadyMessage = { type: "ready", url: `http://127.0.0.1:${port}` };
  process.send?.(ready);
});
profileOnRequest();
exitWithParent(
  () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
);
