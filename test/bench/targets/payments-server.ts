// Benchmark target: the real payments server with production-like settings (response validation
// off, the request log on) on a random loopback port, in-memory store.
import { startTestServer } from "../../support/server.ts";
import { exitWithParent, type ReadyMessage, TOKEN_BODY } from "./protocol.ts";

const server = await startTestServer({ VALIDATE_RESPONSES: "false", REQUEST_LOG: "true" });
exitWithParent(() => server.close());

/** A fixture made through the API before the run. */
async function create(path: string, body: unknown, status: number): Promise<{ id: string }> {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${server.sandboxKey}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (res.status !== status)
    throw new Error(`creating the ${path} fixture answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as { id: string };
}
const token = await create("/v1/tokens", TOKEN_BODY, 200);
const merchant = await create("/v1/merchants", { name: "Bench Merchant" }, 201);

const ready: ReadyMessage = {
  type: "ready",
  url: server.url,
  key: server.sandboxKey,
  tokenId: token.id,
  merchantId: merchant.id,
};
process.send?.(ready);
