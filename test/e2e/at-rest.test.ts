import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createLogger, loadConfig, startServer } from "@payments/server";
import { afterAll, describe, expect, it } from "vitest";
import { cardBody, json, MASTERCARD, VISA } from "./fixtures.ts";

// Issue #3 "done when": after tokenizing cards the full number appears nowhere in clear — not in the
// database files, not in logs, not in any error body — and a restart on the same DATA_DIR keeps the
// data and prints no new key. Uses a real file-backed store, as `npm start` does. Webhook signing
// secrets (`whsec_…`) are held to the same rule.

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, logger: createLogger("debug", stream) };
}

async function boot(dataDir: string, logger: ReturnType<typeof createLogger>) {
  const config = loadConfig({ NODE_ENV: "development", PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "debug" });
  return startServer({ config, logger });
}

describe("card data at rest, in logs and across restarts", () => {
  it("never stores, logs or echoes a card number, and keeps everything across a restart", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "payments-at-rest-"));
    dirs.push(dataDir);
    const log = capture();
    const first = await boot(dataDir, log.logger);
    expect(first.bootstrapSecret).toMatch(/^key_test_/);
    const auth = { authorization: `Bearer ${first.bootstrapSecret}`, "content-type": "application/json" };

    const tokenIds: string[] = [];
    for (const card of [VISA, MASTERCARD, "4242 4242 4242 4242"]) {
      const res = await fetch(`${first.url}/v1/tokens`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify(cardBody(card)),
      });
      expect(res.status).toBe(200);
      tokenIds.push((await json(res)).id);
    }
    // Card numbers in places they do not belong: a query string, an unknown route, a bad card.
    const leaks = [
      await fetch(`${first.url}/v1/merchants?card=${VISA}`, { headers: auth }),
      await fetch(`${first.url}/v1/cards/${MASTERCARD}`, { headers: auth }),
      await fetch(`${first.url}/v1/tokens`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify(cardBody("4242424242424241")),
      }),
      await fetch(`${first.url}/v1/tokens`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ ...cardBody(), cvc: VISA }),
      }),
    ];
    for (const res of leaks) {
      const text = await res.text();
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(text).not.toContain(VISA);
      expect(text).not.toContain(MASTERCARD);
      expect(text).not.toContain("4242424242424241");
    }
    const merchant = await fetch(`${first.url}/v1/merchants`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ name: "Survivor" }),
    });
    const merchantId = (await json(merchant)).id;

    // Webhook signing secrets (issue #8): shown once, stored only sealed under the vault's master key.
    // A sandbox endpoint on a closed loopback port, a test delivery (signed, then refused), a rotation.
    const endpointRes = await fetch(`${first.url}/v1/webhook_endpoints`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ url: "http://127.0.0.1:9/hooks", enabled_events: ["webhook_endpoint.test"] }),
    });
    expect(endpointRes.status).toBe(201);
    const endpoint = await json(endpointRes);
    const rotated = await json(
      await fetch(`${first.url}/v1/webhook_endpoints/${endpoint.id}/rotate_secret`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ grace_period_seconds: 3600 }),
      }),
    );
    const secrets: string[] = [endpoint.secret, rotated.secret];
    for (const s of secrets) expect(s).toMatch(/^whsec_/);
    const test = await fetch(`${first.url}/v1/webhook_endpoints/${endpoint.id}/test`, {
      method: "POST",
      headers: auth,
    });
    expect(test.status).toBe(202);
    const deliveryId = (await json(test)).id;
    for (let i = 0; i < 500; i++) {
      const d = await json(await fetch(`${first.url}/v1/webhook_deliveries/${deliveryId}`, { headers: auth }));
      if (d.attempt_count > 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await first.close();

    // Every byte the store wrote (database, WAL, shared memory, key file).
    const files = readdirSync(dataDir).map((f) => join(dataDir, f));
    expect(files.some((f) => f.endsWith(".sqlite"))).toBe(true);
    const bytes = Buffer.concat(files.filter((f) => statSync(f).isFile()).map((f) => readFileSync(f)));
    for (const pan of [VISA, MASTERCARD, "4242424242424241"]) {
      expect(bytes.includes(Buffer.from(pan)), `${pan} in the data files`).toBe(false);
      expect(bytes.includes(Buffer.from(pan, "utf16le"))).toBe(false);
    }
    for (const secret of secrets)
      expect(bytes.includes(Buffer.from(secret)), "a webhook secret in the data files").toBe(false);
    expect(bytes.includes(Buffer.from("whsec_")), "whsec_ in the data files").toBe(false);
    // Owner-only permissions on the generated vault keys.
    const keyFile = files.find((f) => f.endsWith("vault-keys.json"));
    expect(keyFile).toBeDefined();
    expect(statSync(keyFile ?? "").mode & 0o077).toBe(0);

    const logText = log.lines.join("");
    expect(log.lines.length).toBeGreaterThan(5);
    expect(logText).toContain('"path":"/v1/merchants?card=4242********4242"');
    for (const pan of [VISA, MASTERCARD, "4242424242424241"]) expect(logText).not.toContain(pan);
    expect(logText).not.toContain("whsec_");

    // Restart on the same DATA_DIR: no new key, data and vault keys intact.
    const again = capture();
    const second = await boot(dataDir, again.logger);
    try {
      expect(second.bootstrapSecret).toBeNull();
      const got = await fetch(`${second.url}/v1/merchants/${merchantId}`, { headers: auth });
      expect(got.status).toBe(200);
      const reveal = await fetch(`${second.url}/v1/tokens/${tokenIds[0]}/reveal`, { method: "POST", headers: auth });
      expect((await json(reveal)).card.number).toBe(VISA);
      const requestLog = await second.store.findAll("request_log", {});
      expect(requestLog.length).toBeGreaterThan(5);
      expect(JSON.stringify(requestLog)).not.toContain(VISA);
    } finally {
      await second.close();
    }
  });
});
