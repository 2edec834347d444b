import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createTransport, TransportError } from "./transport.ts";

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
        response.writeHead(201, {
          "content-type": "application/json",
          "x-seen-key": String(request.headers["idempotency-key"]),
        });
        response.end(JSON.stringify({ method: request.method, body }));
      });
    });
    const transport = createTransport({ timeoutMs: 10_000, maxSockets: 1 });
    try {
      for (const n of [1, 2]) {
        const answer = await transport.fetch(
          new Request(`${url}/payments`, {
            method: "POST",
            headers: { "content-type": "application/json", "Idempotency-Key": `k${n}` },
            body: JSON.stringify({ n }),
          }),
        );
        expect(answer.status).toBe(201);
        expect(answer.headers.get("x-seen-key")).toBe(`k${n}`);
        expect(await answer.json()).toEqual({ method: "POST", body: JSON.stringify({ n }) });
      }
      expect(ports).toHaveLength(2);
      expect(ports[1]).toBe(ports[0]);
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
      const error = await transport
        .fetch(new Request(`${url}/payments`, { method: "POST", body: "{}" }))
        .catch((e) => e);
      expect(error).toBeInstanceOf(TransportError);
      expect((error as TransportError).kind).toBe("timeout");
      const refused = await transport.fetch(new Request("http://127.0.0.1:1/payments")).catch((e) => e);
      expect((refused as TransportError).kind).toBe("network");
    } finally {
      transport.close();
    }
  });
});
