import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Webhook } from "standardwebhooks";
import Stripe from "stripe";
import { afterEach, describe, expect, it } from "vitest";
import { CONFORM_CASES, type ConformCaseId, type ConformOptions, conform } from "./conform.ts";
import { verifyWebhook, WebhookVerificationError } from "./webhooks.ts";
import { readRawBody, webhookListener } from "./webhooks-node.ts";

// `payments conform` against receivers on 127.0.0.1: correct ones (the package's own webhookListener, which
// the example receiver uses; one on Stripe's SDK; one on the `standardwebhooks` library, the two independent
// implementations of the schemes) pass every case, and each deliberately broken one fails exactly the cases
// its defect breaks, no more and no fewer.

const here = dirname(fileURLToPath(import.meta.url));
const SECRET = "whsec_4fQx9ZkT2mB7rLp1WcYd8sNa6GhJ3KlQ";
const stripe = new Stripe("sk_test_x");

const servers: Server[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

async function serve(handler: Handler): Promise<string> {
  const server = createServer((req, res) => {
    Promise.resolve(handler(req, res)).catch(() => res.writeHead(500).end());
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
}

const failedCases = async (url: string, options: Partial<ConformOptions> = {}) => {
  const report = await conform({ url, secret: SECRET, ...options });
  return report.cases.filter((c) => !c.passed).map((c) => c.id);
};

/**
 * A receiver written the way the guides say, on `verifyWebhook`, with one defect switched on at a time:
 * each defect is a mistake integrators make.
 */
interface Defects {
  /** Accepts any timestamp (the tolerance check left out). */
  noTolerance?: boolean;
  /** Answers 409 to an event id it has seen. */
  refuseRepeats?: boolean;
  /** Answers 400 to a type it has no handler for. */
  refuseUnknownTypes?: boolean;
  /** Answers 422 to a refund of a charge whose capture it has not seen. */
  requireOrder?: boolean;
  /** Refuses bodies over 64 KiB (413). */
  smallBodyLimit?: boolean;
  /** Checks only the first `v1=` of the header. */
  firstSignatureOnly?: boolean;
  /** Verifies nothing. */
  noVerification?: boolean;
}

const KNOWN = new Set(["payment.captured", "payment.refunded", "merchant.updated"]);

function receiver(defects: Defects): Handler {
  const seen = new Set<string>();
  const captured = new Set<string>();
  return async (req, res) => {
    let raw: Buffer;
    try {
      raw = await readRawBody(req, defects.smallBodyLimit ? 64 * 1024 : undefined);
    } catch {
      return void res.writeHead(413, { connection: "close" }).end();
    }
    let header = String(req.headers["x-service-signature"] ?? "");
    if (defects.firstSignatureOnly) header = header.split(",").slice(0, 2).join(",");
    let event: { id: string; type: string; tx_id?: string };
    try {
      event = defects.noVerification
        ? JSON.parse(raw.toString("utf8"))
        : verifyWebhook({
            payload: raw,
            header,
            secret: SECRET,
            ...(defects.noTolerance ? { toleranceSeconds: Number.MAX_SAFE_INTEGER } : {}),
          });
    } catch (err) {
      if (err instanceof WebhookVerificationError) return void res.writeHead(401).end(err.reason);
      throw err;
    }
    if (defects.refuseRepeats && seen.has(event.id)) return void res.writeHead(409).end("seen");
    seen.add(event.id);
    if (defects.refuseUnknownTypes && !KNOWN.has(event.type)) return void res.writeHead(400).end("unknown type");
    if (event.type === "payment.captured" && event.tx_id) captured.add(event.tx_id);
    if (defects.requireOrder && event.type === "payment.refunded" && !captured.has(event.tx_id ?? "")) {
      return void res.writeHead(422).end("not captured yet");
    }
    res.writeHead(200).end("ok");
  };
}

describe("conform against correct receivers", () => {
  it("passes every case, in order, on the package's webhookListener (what the example receiver runs)", async () => {
    const url = await serve(webhookListener({ secret: SECRET, onEvent: () => {} }));
    const seen: ConformCaseId[] = [];
    const report = await conform({ url, secret: SECRET, onCase: (c) => seen.push(c.id) });
    expect(report.cases.filter((c) => !c.passed)).toEqual([]);
    expect(report.passed).toBe(true);
    expect(seen).toEqual(CONFORM_CASES);
    expect(report.cases.map((c) => c.scheme)).toEqual(CONFORM_CASES.map(() => "x_service_signature"));
    const large = report.cases.find((c) => c.id === "large_payload")?.deliveries[0];
    expect(large?.bytes).toBeGreaterThan(75_000);
    expect(report.cases.find((c) => c.id === "duplicate")?.deliveries).toHaveLength(2);
  });

  it("passes every case but one on a receiver that verifies with Stripe's SDK (an independent X-Service-Signature check)", async () => {
    const url = await serve(async (req, res) => {
      const raw = await readRawBody(req);
      try {
        stripe.webhooks.constructEvent(raw, String(req.headers["x-service-signature"] ?? ""), SECRET, 300);
        res.writeHead(200).end();
      } catch {
        res.writeHead(401).end();
      }
    });
    // Stripe's SDK refuses only old timestamps, while the contract's tolerance holds either way (a
    // timestamp from the future is as replayable): conform reports it, as it would for any receiver.
    expect(await failedCases(url)).toEqual(["future_timestamp"]);
  });

  it("passes every Standard Webhooks case on a receiver using the standardwebhooks library", async () => {
    const url = await serve(async (req, res) => {
      const raw = await readRawBody(req);
      try {
        new Webhook(SECRET).verify(raw.toString("utf8"), req.headers as Record<string, string>);
        res.writeHead(200).end();
      } catch {
        res.writeHead(401).end();
      }
    });
    const report = await conform({ url, secret: SECRET, schemes: ["standard_webhooks"] });
    expect(report.cases.filter((c) => !c.passed)).toEqual([]);
    expect(report.cases).toHaveLength(CONFORM_CASES.length);
  });

  it("runs one series per scheme asked; a receiver of one scheme fails the other's acknowledgements", async () => {
    const url = await serve(webhookListener({ secret: SECRET, onEvent: () => {} }));
    const report = await conform({ url, secret: SECRET, schemes: ["x_service_signature", "standard_webhooks"] });
    const failed = report.cases.filter((c) => !c.passed).map((c) => `${c.scheme}/${c.id}`);
    // Every case that expects 2xx fails under the scheme this receiver does not read; the 401s still hold.
    expect(failed).toEqual(
      ["valid", "rotation", "duplicate", "out_of_order", "unknown_type", "large_payload"].map(
        (id) => `standard_webhooks/${id}`,
      ),
    );
    expect(report.cases.find((c) => !c.passed)?.problem).toMatch(/^expected 2xx, got 401\. .*this secret and scheme/);
    expect(report.passed).toBe(false);
  });
});

describe("conform against broken receivers: each fails exactly the cases its defect breaks", () => {
  it.each<[keyof Defects, ConformCaseId[]]>([
    ["noTolerance", ["stale_timestamp", "future_timestamp"]],
    ["refuseRepeats", ["duplicate"]],
    ["refuseUnknownTypes", ["unknown_type"]],
    ["requireOrder", ["out_of_order"]],
    ["smallBodyLimit", ["large_payload"]],
    ["firstSignatureOnly", ["rotation"]],
    ["noVerification", ["tampered_body", "wrong_secret", "missing_signature", "stale_timestamp", "future_timestamp"]],
  ])("%s", async (defect, expected) => {
    const url = await serve(receiver({ [defect]: true }));
    expect(await failedCases(url)).toEqual(expected);
  });

  it("a receiver with no defect switched on passes (the table above tests the defects, not the harness)", async () => {
    expect(await failedCases(await serve(receiver({})))).toEqual([]);
  });

  it("says what went wrong on each failed delivery", async () => {
    const url = await serve(receiver({ refuseRepeats: true, noTolerance: true }));
    const report = await conform({ url, secret: SECRET });
    const duplicate = report.cases.find((c) => c.id === "duplicate");
    expect(duplicate?.deliveries.map((d) => d.status)).toEqual([200, 409]);
    expect(duplicate?.problem).toMatch(/^expected 2xx, got 409 \(delivery 2 of 2\)\. .*deduplicate on the event id/);
    expect(report.cases.find((c) => c.id === "stale_timestamp")?.problem).toMatch(/^expected 401, got 200\. /);
  });

  it("fails a receiver that does not answer within the time-out, and one that is not there", async () => {
    const hanging = await serve(() => {}); // never answers
    const report = await conform({ url: hanging, secret: SECRET, timeoutMs: 50 });
    expect(report.cases.every((c) => !c.passed)).toBe(true);
    expect(report.cases[0]?.problem).toMatch(/^expected 2xx, no answer within 50 ms\. /);

    const closed = await serve(() => {});
    const server = servers.pop();
    server?.close();
    const gone = await conform({ url: closed, secret: SECRET });
    expect(gone.cases[0]?.deliveries[0]).toMatchObject({ status: null, error: expect.stringMatching(/fetch failed/) });
    expect(gone.passed).toBe(false);
  });

  it("refuses, before sending anything, a secret Standard Webhooks cannot read", async () => {
    let requests = 0;
    const url = await serve((_req, res) => {
      requests++;
      res.writeHead(200).end();
    });
    await expect(conform({ url, secret: "whsec_not*base64", schemes: ["standard_webhooks"] })).rejects.toThrow(
      /must be base64 after its whsec_ prefix/,
    );
    expect(requests).toBe(0);
  });
});

describe("payments conform (the CLI)", { timeout: 60_000 }, () => {
  const run = promisify(execFile);
  const cli = (...args: string[]) =>
    run(process.execPath, ["--import", "tsx", resolve(here, "cli.ts"), "conform", ...args]).then(
      (r) => ({ code: 0, ...r }),
      (err: { code: number; stdout: string; stderr: string }) => err,
    );

  it("passes the example receiver (examples/receiver.ts) and exits 0", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "examples/receiver.ts"], {
      cwd: resolve(here, ".."),
      env: { ...process.env, PORT: "0", WEBHOOK_SECRET: SECRET },
      stdio: ["ignore", "pipe", "inherit"],
    });
    children.push(child);
    const url = await new Promise<string>((done, fail) => {
      let out = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        out += chunk;
        const found = /^listening on (\S+)$/m.exec(out)?.[1];
        if (found) done(found);
      });
      child.once("exit", () => fail(new Error(`the receiver exited:\n${out}`)));
    });
    const result = await cli("--url", url, "--secret", SECRET);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain(`${url}, signed with x_service_signature:`);
    expect(result.stdout.match(/^ {2}PASS /gm)).toHaveLength(CONFORM_CASES.length);
    expect(result.stdout).toContain(`All ${CONFORM_CASES.length} cases passed.`);
  });

  it("exits 1 and names the failed cases for a broken receiver; --json gives the report", async () => {
    const url = await serve(receiver({ refuseUnknownTypes: true }));
    const result = await cli("--url", url, "--secret", SECRET);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^ {2}FAIL {2}unknown_type /m);
    expect(result.stdout).toContain(`1 of ${CONFORM_CASES.length} cases failed: unknown_type.`);

    const json = await cli("--url", url, "--secret", SECRET, "--json");
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as { passed: boolean; cases: { id: string; passed: boolean }[] };
    expect(report.passed).toBe(false);
    expect(report.cases.filter((c) => !c.passed).map((c) => c.id)).toEqual(["unknown_type"]);
  });

  it("exits 2 with the usage when --url or --secret is missing or --scheme is unknown", async () => {
    const noSecret = await cli("--url", "http://127.0.0.1:9/webhooks");
    expect(noSecret.code).toBe(2);
    expect(noSecret.stderr).toContain("Usage: payments conform");
    const badScheme = await cli("--url", "http://127.0.0.1:9/x", "--secret", SECRET, "--scheme", "v2");
    expect(badScheme.code).toBe(2);
    expect(badScheme.stderr).toContain('not "v2"');
  });
});
