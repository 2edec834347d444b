import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { eventually } from "./eventually.ts";

// A webhook receiver on 127.0.0.1 for the e2e suites: it records every request with its raw body (what
// a signature covers), and answers each path as the test says (200 "ok" unless told otherwise).

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver whose answer per path the test sets; it records every request with its raw body. */
export class Receiver {
  readonly requests: Received[] = [];
  answers = new Map<string, (n: number) => [number, string]>();
  private server!: Server;
  url = "";

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const path = req.url ?? "/";
        this.requests.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
        const n = this.requests.filter((r) => r.path === path).length;
        const [status, body] = this.answers.get(path)?.(n) ?? [200, "ok"];
        res.writeHead(status, { "content-type": "text/plain" }).end(body);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  at(path: string): Received[] {
    return this.requests.filter((r) => r.path === path);
  }

  /** The requests to `path`, once there are `count` of them (deliveries arrive in the background). */
  waitFor(path: string, count = 1): Promise<Received[]> {
    return eventually(
      `${count} deliveries to ${path}`,
      () => this.at(path),
      (got) => got.length >= count,
    );
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
