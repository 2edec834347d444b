import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createTransport, endpointOf, TransportError } from "./transport.ts";

// The connector's transport: kept-alive connections, and a call that gets no answer ends as a time-out
// the connector treats as in doubt. Servers listen on loopback, on a free port.

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("Adyen transport", () => {
  it("sends the method, headers and body, returns the answer, and reuses the connection", async () => {
    const ports: number[] = [];
    const url = await listen((request, response) => {
      ports.push(request.socket.remotePort ?? 0);
      let body = "";
      request.on("data", (chunk: Buffer) => {
        body += chunk.toString("utf8");
      });
      request.on("end", () => {
        response.writeHead(201, { "content-type": "application/json" });
        response.end(
          JSON.stringify({
            method: request.method,
            url: request.url,
            key: request.headers["idempotency-key"],
            length: request.headers["content-length"],
            body,
          }),
        );
      });
    });
    const transport = createTransport({ timeoutMs: 10_000, maxSockets: 1 });
    try {
      for (const n of [1, 2]) {
        const answer = await transport.send({
          method: "POST",
          endpoint: endpointOf(`${url}/v71/`),
          path: "/payments",
          headers: { "content-type": "application/json", "Idempotency-Key": `k${n}` },
          body: JSON.stringify({ n, text: "é" }),
        });
        expect(answer.status).toBe(201);
        expect(JSON.parse(answer.body)).toEqual({
          method: "POST",
          url: "/v71/payments",
          key: `k${n}`,
          length: String(Buffer.byteLength(JSON.stringify({ n, text: "é" }))),
          body: JSON.stringify({ n, text: "é" }),
        });
      }
      expect(ports).toHaveLength(2);
      expect(ports[1]).toBe(ports[0]);
    } finally {
      transport.close();
    }
  });

  it("under load keeps at most maxSockets connections open and reuses them for every later call", async () => {
    const sockets = new Set<string>();
    let connections = 0;
    const url = await listen((request, response) => {
      sockets.add(`${request.socket.remotePort}`);
      request.resume();
      request.on("end", () => response.end('{"ok":true}'));
    });
    server?.on("connection", () => {
      connections += 1;
    });
    const transport = createTransport({ timeoutMs: 10_000, maxSockets: 4 });
    const endpoint = endpointOf(url);
    const one = () => transport.send({ method: "POST", endpoint, path: "/payments", headers: {}, body: "{}" });
    try {
      // 5 rounds of 20 calls at once: 100 calls over at most 4 connections, opened in the first round.
      for (let round = 0; round < 5; round++) {
        const answers = await Promise.all(Array.from({ length: 20 }, one));
        expect(answers.every((a) => a.status === 200 && a.body === '{"ok":true}')).toBe(true);
      }
      expect(connections).toBeLessThanOrEqual(4);
      expect(sockets.size).toBe(connections);
    } finally {
      transport.close();
    }
  });

  it("ends a call with no answer as a time-out, and a refused connection as a network failure", async () => {
    const url = await listen(() => {
      // Never answers.
    });
    const transport = createTransport({ timeoutMs: 200, maxSockets: 1 });
    try {
      // While the call waits, the event loop goes on: immediates keep running until the time-out ends it.
      let turns = 0;
      let waiting = true;
      const spin = () => {
        turns += 1;
        if (waiting) setImmediate(spin);
      };
      setImmediate(spin);
      const error = await transport
        .send({ method: "POST", endpoint: endpointOf(url), path: "/payments", headers: {}, body: "{}" })
        .catch((e: unknown) => e)
        .finally(() => {
          waiting = false;
        });
      expect(turns).toBeGreaterThan(10);
      expect(error).toBeInstanceOf(TransportError);
      expect((error as TransportError).kind).toBe("timeout");
      const refused = await transport
        .send({ method: "POST", endpoint: endpointOf("http://127.0.0.1:1"), path: "/payments", headers: {} })
        .catch((e: unknown) => e);
      expect((refused as TransportError).kind).toBe("network");
    } finally {
      transport.close();
    }
  });
});
