import { type ChildProcess, spawn } from "node:child_process";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { verifyWebhook } from "@payments/client/webhooks";
import { loadConfig, startServer } from "@payments/server";
import { exited, inheritedEnv, untilAnswering } from "../support/crash.ts";
import { SERVER_DIR } from "../support/process.ts";

export { freePort, pause, seeded } from "../support/crash.ts";

// What the webhook reliability tests share: a server run as its own process (its built bundle, as
// test/crash/idempotency-crash.test.ts runs it) on a file-backed store, so it can be
// killed with SIGKILL and restarted on the same data; and a receiver on 127.0.0.1 that verifies every
// delivery and counts what arrived.

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Lines the process wrote to stdout (pino JSON when LOG_LEVEL allows). */
  lines: string[];
  dead(): boolean;
  /** SIGKILL, and wait for the exit. */
  kill(): Promise<void>;
  /** SIGTERM (a clean stop), and wait for the exit. */
  stop(): Promise<void>;
}

/**
 * Starts the server's bundle (`main`, from support/crash.ts bundlePerFile) on `port` and `dataDir`, and
 * waits until it answers with `key`.
 */
export async function startServerProcess(options: {
  main: string;
  port: number;
  dataDir: string;
  key: string;
  env?: Record<string, string>;
}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [options.main], {
    cwd: SERVER_DIR,
    env: {
      ...inheritedEnv,
      NODE_ENV: "development",
      PORT: String(options.port),
      DATA_DIR: options.dataDir,
      LOG_LEVEL: "silent",
      // Log lines are read as JSON (the two-instance test counts attempts per instance from them).
      LOG_FORMAT: "json",
      // The harness makes events as fast as the server takes them, with one sandbox key.
      RATE_LIMIT_TEST_PER_SECOND: "1000000",
      ...options.env,
    },
    stdio: ["ignore", "pipe", "ignore"],
  });
  const lines: string[] = [];
  let partial = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop() ?? "";
    lines.push(...parts);
  });
  const url = `http://127.0.0.1:${options.port}`;
  const dead = () => exited(child);
  const waitExit = () => (dead() ? Promise.resolve() : new Promise<void>((r) => child.once("exit", () => r())));
  const proc: ServerProcess = {
    child,
    url,
    lines,
    dead,
    async kill() {
      if (dead()) return;
      const gone = waitExit();
      child.kill("SIGKILL");
      await gone;
    },
    async stop() {
      if (dead()) return;
      const gone = waitExit();
      child.kill("SIGTERM");
      await gone;
    },
  };
  try {
    await untilAnswering(url, options.key, dead);
  } catch (err) {
    if (dead()) throw new Error(`the server exited during start-up (${child.exitCode ?? child.signalCode})`);
    await proc.kill();
    throw err;
  }
  return proc;
}

export interface Receipt {
  eventId: string;
  deliveryId: string;
  attempt: string;
  type: string;
  valid: boolean;
}

/**
 * Receives deliveries on 127.0.0.1, verifies each signature with the client's verifier and answers 200
 * after a short random delay (so kills land while attempts are in flight). `onReceipt` runs before the
 * answer, so a test can kill the sender between "received" and "acknowledged".
 */
export class CountingReceiver {
  readonly receipts: Receipt[] = [];
  secret = "";
  onReceipt: (receipt: Receipt) => void = () => {};
  url = "";
  private server!: Server;

  constructor(private readonly random: () => number) {}

  async start(): Promise<void> {
    this.server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        let valid = true;
        let type = "";
        try {
          type = verifyWebhook({
            payload: body,
            header: req.headers["x-service-signature"] as string,
            secret: this.secret,
          }).type;
        } catch {
          valid = false;
        }
        const receipt = {
          eventId: String(req.headers["x-service-event-id"]),
          deliveryId: String(req.headers["x-service-delivery-id"]),
          attempt: String(req.headers["x-service-delivery-attempt"]),
          type,
          valid,
        };
        this.receipts.push(receipt);
        this.onReceipt(receipt);
        setTimeout(() => res.writeHead(valid ? 200 : 401).end(), Math.floor(this.random() * 8));
      });
      req.on("error", () => {});
    });
    this.server.keepAliveTimeout = 30_000;
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/webhooks`;
  }

  /** Distinct event ids received with a valid signature. */
  events(): Set<string> {
    return new Set(this.receipts.filter((r) => r.valid).map((r) => r.eventId));
  }

  /** How many receipts repeat an event already received (at-least-once duplicates). */
  duplicateEvents(): number {
    return this.receipts.filter((r) => r.valid).length - this.events().size;
  }

  /** How many receipts repeat the same attempt (delivery id and attempt number) of another. */
  repeatedAttempts(): number {
    const seen = new Set<string>();
    let repeats = 0;
    for (const r of this.receipts) {
      const key = `${r.deliveryId}#${r.attempt}`;
      if (seen.has(key)) repeats++;
      seen.add(key);
    }
    return repeats;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/** POSTs JSON with the key; null when the connection failed (the server died). */
export async function post(
  url: string,
  key: string,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> } | null> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  } catch {
    return null;
  }
}

/**
 * Prepares a data directory for a delivery run, in-process: the first start's key, an endpoint on
 * `receiver` subscribed to every event (its secret given to the receiver), a merchant and a card token.
 */
export async function deliveryFixture(
  dataDir: string,
  receiver: CountingReceiver,
  merchantName: string,
): Promise<{ key: string; endpoint: Record<string, unknown>; merchantId: string; tokenId: string }> {
  const setup = await startServer({ config: loadConfig({ PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "silent" }) });
  try {
    const key = setup.bootstrapSecret as string;
    const created = async (path: string, body: unknown) => (await post(`${setup.url}${path}`, key, body))?.body ?? {};
    const endpoint = await created("/v1/webhook_endpoints", { url: receiver.url, enabled_events: ["*"] });
    receiver.secret = String(endpoint.secret);
    const merchant = await created("/v1/merchants", { name: merchantName });
    const token = await created("/v1/tokens", {
      card: "4242424242424242",
      holder: "Ada",
      exp_month: 12,
      exp_year: 2031,
    });
    return { key, endpoint, merchantId: String(merchant.id), tokenId: String(token.id) };
  } finally {
    await setup.close();
  }
}
