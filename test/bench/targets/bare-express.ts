// Benchmark baseline: a bare Express 5 app with one JSON GET and one JSON POST echo, nothing else
// (no auth, validation, idempotency or store), on a random loopback port.
import type { AddressInfo } from "node:net";
import express from "express";
import { exitWithParent, profileOnRequest, type ReadyMessage } from "./protocol.ts";

const app = express();
app.disable("x-powered-by");
app.set("etag", false); // the payments app turns ETags off too
app.get("/bare", (_req, res) => {
  res.json({ id: "obj_4fQx9ZkT2mB7rLp1WcYd8sNa", object: "thing", name: "bare", livemode: false });
});
app.post("/bare", express.json(), (req, res) => {
  res.status(200).json(req.body);
});

const server = app.listen(0, "127.0.0.1", () => {
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
