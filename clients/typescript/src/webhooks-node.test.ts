import { spawn } from "node:child_process";
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import express from "express";
import Stripe from "stripe";
import { afterEach, describe, expect, it } from "vitest";
import { signWebhookPayload } from "./webhooks.ts";
import { expressWebhookMiddleware, type WebhookEvent, webhookListener } from "./webhooks-node.ts";

// The receiving helpers on real HTTP servers on 127.0.0.1: the raw body is what gets verified, so a
// re-serialized body fails, and Express's JSON parser in front of the middleware is caught loudly.

const secret = "whsec_4fQx9ZkT2mB7rLp1WcYd8sNa6GhJ3KlQ";
// Formatted as a sender might: spaces and an escaped character that JSON.stringify would write differently.
const payload =
  '{ "id": "evt_5Tg7YhUj9IkOl2PzXc4VbNm6", "type": "webhook_endpoint.test", "created_at": "2026-11-21T10:30:00Z", "livemode": false, "endpoint_id": "we_3Fg7Hj2Kl9Zx4Cv8Bn1Mq6Wa", "note": "caf\\u00e9" }';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function listen(handler: RequestListener): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
}

const post = (url: string, body: string, header?: string) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(header ? { "x-service-signature": header } : {}) },
    body,
  });

describe("webhookListener (node:http)", () => {
  it("verifies the raw body, hands over the event and answers 200", async () => {
    const events: WebhookEvent[] = [];
    const url = await listen(webhookListener({ secret, onEvent: (e) => void events.push(e) }));
    const res = await post(url, payload, signWebhookPayload({ payload, secret }));
    expect(res.status).toBe(200);
    expect(events).toEqual([JSON.parse(payload)]);
  });

  it("accepts a header made by Stripe's SDK, and either secret during a rotation", async () => {
    const url = await listen(webhookListener({ secret: ["whsec_new", secret], onEvent: () => {} }));
    const header = new Stripe("sk_test_unused").webhooks.generateTestHeaderString({ payload, secret });
    expect((await post(url, payload, header)).status).toBe(200);
  });

  it("answers 401 for a wrong secret, a missing header, or a body re-serialized after signing", async () => {
    const url = await listen(webhookListener({ secret, onEvent: () => {} }));
    expect((await post(url, payload, signWebhookPayload({ payload, secret: "whsec_wrong" }))).status).toBe(401);
    expect((await post(url, payload)).status).toBe(401);
    const reserialized = JSON.stringify(JSON.parse(payload));
    expect(reserialized).not.toBe(payload);
    expect((await post(url, reserialized, signWebhookPayload({ payload, secret }))).status).toBe(401);
  });

  it("answers 500 when the handler fails (so the sender retries), 413 for an oversized body, 405 for GET", async () => {
    const url = await listen(
      webhookListener({
        secret,
        maxBodyBytes: 2048,
        onEvent: () => {
          throw new Error("database down");
        },
      }),
    );
    expect((await post(url, payload, signWebhookPayload({ payload, secret }))).status).toBe(500);
    const big = JSON.stringify({ pad: "x".repeat(4096) });
    expect((await post(url, big, signWebhookPayload({ payload: big, secret }))).status).toBe(413);
    expect((await fetch(url)).status).toBe(405);
  });
});

describe("expressWebhookMiddleware", () => {
  function app(before: express.RequestHandler[]) {
    const a = express();
    const seen: unknown[] = [];
    a.post("/webhooks", ...before, expressWebhookMiddleware({ secret }), (req, res) => {
      seen.push(req.webhookEvent);
      res.sendStatus(200);
    });
    // A developer error (express.json in front) must surface, not pass as a verification failure.
    a.use((err: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(500).send(err.message);
    });
    return { a, seen };
  }

  it("verifies on its own and after express.raw()", async () => {
    for (const before of [[], [express.raw({ type: "application/json" })]]) {
      const { a, seen } = app(before);
      const url = await listen(a);
      expect((await post(url, payload, signWebhookPayload({ payload, secret }))).status).toBe(200);
      expect(seen).toEqual([JSON.parse(payload)]);
      expect((await post(url, payload, signWebhookPayload({ payload, secret: "whsec_x" }))).status).toBe(401);
    }
  });

  it("refuses to verify a body express.json() already parsed, and says why", async () => {
    const { a } = app([express.json()]);
    const url = await listen(a);
    const res = await post(url, payload, signWebhookPayload({ payload, secret }));
    expect(res.status).toBe(500);
    expect(await res.text()).toMatch(/parsed as JSON before verification.*express\.raw/);
  });
});

describe("examples/receiver.ts", () => {
  it("runs, answers 200 to a signed delivery and 401 to a forged one", { timeout: 30_000 }, async () => {
    const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
    const child = spawn(process.execPath, ["--import", "tsx", "examples/receiver.ts"], {
      cwd: root,
      env: { ...process.env, WEBHOOK_SECRET: secret, PORT: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let output = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        output += chunk;
      });
      for (let i = 0; i < 300 && !/listening on (\S+)/.test(output); i++) await new Promise((r) => setTimeout(r, 50));
      const url = /listening on (\S+)/.exec(output)?.[1];
      if (!url) throw new Error(`the example did not start: ${output}`);
      expect((await post(url, payload, signWebhookPayload({ payload, secret }))).status).toBe(200);
      expect((await post(url, payload, signWebhookPayload({ payload, secret: "whsec_forged" }))).status).toBe(401);
      for (let i = 0; i < 100 && !output.includes("webhook_endpoint.test"); i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(output).toContain("webhook_endpoint.test evt_5Tg7YhUj9IkOl2PzXc4VbNm6");
    } finally {
      child.kill("SIGTERM");
    }
  });
});
