import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DeliveryRequest } from "../domain/webhooks/sender.ts";
import { addressPolicy, type Resolver } from "../domain/webhooks/ssrf.ts";
import { createHttpWebhookSender } from "./webhook-sender.ts";

// The HTTP sender against a receiver on 127.0.0.1. Every connection this test makes goes to loopback;
// the production refusals are checked with addresses and names refused before any connection (names
// resolve through resolvers made here, never a DNS server), and the receiver counts what reaches it.

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;
let handler: Handler = (_req, res) => res.end("ok");
const hits: { path: string; headers: IncomingMessage["headers"]; body: string }[] = [];
let server: Server;
let port = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      hits.push({ path: req.url ?? "", headers: req.headers, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const sandbox = addressPolicy(false, { allowLoopback: true, allowPrivate: false });
const production = addressPolicy(true, { allowLoopback: true, allowPrivate: true });

/** Names for the tests: `rebind.test` resolves publicly the first time, to a private address after. */
function names(): Resolver {
  let rebinds = 0;
  return async (hostname) => {
    if (hostname === "receiver.localhost") return [{ address: "127.0.0.1", family: 4 }];
    if (hostname === "rebind.test") {
      return [{ address: rebinds++ === 0 ? "93.184.216.34" : "10.0.0.1", family: 4 }];
    }
    if (hostname === "split.test")
      return [
        { address: "127.0.0.1", family: 4 },
        { address: "169.254.169.254", family: 4 },
      ];
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
  };
}

function request(url: string, overrides: Partial<DeliveryRequest> = {}): DeliveryRequest {
  return {
    url,
    headers: { "content-type": "application/json", "x-service-signature": "t=1,v1=00" },
    body: '{"id":"evt_1","note":"café"}',
    timeoutMs: 2_000,
    policy: sandbox,
    ...overrides,
  };
}

describe("HTTP webhook sender", () => {
  const sender = createHttpWebhookSender({ resolve: names() });
  afterAll(() => sender.close?.());

  it("POSTs the exact body and headers and reports the answer", async () => {
    handler = (_req, res) => res.writeHead(200, { "content-type": "application/json" }).end('{"received":true}');
    hits.length = 0;
    const result = await sender.send(request(`http://127.0.0.1:${port}/hooks?x=1`));
    expect(result).toMatchObject({ kind: "response", status: 200, body: '{"received":true}' });
    expect(hits).toHaveLength(1);
    expect(hits[0]?.path).toBe("/hooks?x=1");
    expect(hits[0]?.body).toBe('{"id":"evt_1","note":"café"}');
    expect(hits[0]?.headers["x-service-signature"]).toBe("t=1,v1=00");
    expect(hits[0]?.headers["content-length"]).toBe(String(Buffer.byteLength('{"id":"evt_1","note":"café"}')));
  });

  it("keeps only the first 1024 bytes of the answer's body", async () => {
    handler = (_req, res) => res.writeHead(500).end("x".repeat(5000));
    const result = await sender.send(request(`http://127.0.0.1:${port}/big`));
    expect(result.kind).toBe("response");
    if (result.kind === "response") {
      expect(result.status).toBe(500);
      expect(result.body).toBe("x".repeat(1024));
    }
  });

  it("does not follow a redirect", async () => {
    handler = (req, res) =>
      req.url === "/moved" ? res.writeHead(302, { location: `http://127.0.0.1:${port}/target` }).end() : res.end("ok");
    hits.length = 0;
    const result = await sender.send(request(`http://127.0.0.1:${port}/moved`));
    expect(result).toMatchObject({ kind: "response", status: 302 });
    expect(hits.map((h) => h.path)).toEqual(["/moved"]);
  });

  it("times out a receiver that does not answer", async () => {
    handler = () => {}; // never answers
    const result = await sender.send(request(`http://127.0.0.1:${port}/slow`, { timeoutMs: 150 }));
    expect(result).toMatchObject({ kind: "error", error: "timeout" });
  });

  it("reports a refused connection", async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const closed = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const result = await sender.send(request(`http://127.0.0.1:${closed}/`));
    expect(result).toMatchObject({ kind: "error", error: "connection_error" });
  });

  it("resolves names through its resolver and reports one that does not resolve", async () => {
    handler = (_req, res) => res.end("ok");
    expect(await sender.send(request(`http://receiver.localhost:${port}/`))).toMatchObject({ status: 200 });
    expect(await sender.send(request(`http://nowhere.test:${port}/`))).toMatchObject({ error: "dns_error" });
  });

  it("production refuses http and special addresses before connecting", async () => {
    hits.length = 0;
    for (const url of [
      `http://127.0.0.1:${port}/`,
      `https://127.0.0.1:${port}/`,
      "https://10.0.0.1/",
      "https://169.254.169.254/latest/meta-data",
      `https://[::1]:${port}/`,
    ]) {
      expect(await sender.send(request(url, { policy: production })), url).toMatchObject({
        kind: "error",
        error: "address_refused",
      });
    }
    expect(hits).toHaveLength(0);
  });

  it("checks the address actually connected to: a name rebound to a private address is refused", async () => {
    const resolve = names();
    const rebinding = createHttpWebhookSender({ resolve });
    try {
      // The first resolution (what registration saw) is public; the connection's own lookup gets 10.0.0.1.
      expect(await resolve("rebind.test")).toEqual([{ address: "93.184.216.34", family: 4 }]);
      const result = await rebinding.send(request("https://rebind.test/hooks", { policy: production }));
      expect(result).toMatchObject({ kind: "error", error: "address_refused" });
      if (result.kind === "error") expect(result.message).toMatch(/10\.0\.0\.1 is a private address/);
    } finally {
      rebinding.close?.();
    }
  });

  it("refuses a name if any of its addresses is refused", async () => {
    hits.length = 0;
    const result = await sender.send(request(`http://split.test:${port}/`));
    expect(result).toMatchObject({ kind: "error", error: "address_refused" });
    expect(hits).toHaveLength(0);
  });

  it("production refuses a name resolving to loopback at connection time", async () => {
    hits.length = 0;
    const result = await sender.send(request(`https://receiver.localhost:${port}/`, { policy: production }));
    expect(result).toMatchObject({ kind: "error", error: "address_refused" });
    expect(hits).toHaveLength(0);
  });
});
