// Benchmark target: the real payments server with production-like settings (response validation
// off, the request log on) on a random loopback port, in-memory store.
import { startTestServer } from "../../support/server.ts";
import { exitWithParent, type ReadyMessage, TOKEN_BODY } from "./protocol.ts";

const server = await startTestServer({ VALIDATE_RESPONSES: "false", REQUEST_LOG: "true" });
exitWithParent(() => server.close());

const res = await fetch(`${server.url}/v1/tokens`, {
  method: "POST",
  headers: { Authorization: `Bearer ${server.sandboxKey}`, "Content-Type": "application/json" },
  body: JSON.stringify(TOKEN_BODY),
});
if (res.status !== 200) throw new Error(`creating the GET fixture token answered ${res.status}: ${await res.text()}`);
const token = (await res.json()) as { id: string };

const ready: ReadyMessage = { type: "ready", url: server.url, key: server.sandboxKey, tokenId: token.id };
process.send?.(ready);
