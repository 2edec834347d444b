import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createLogger, loadConfig, startServer } from "@payments/server";
import { afterAll, describe, expect, it } from "vitest";
import { eventually } from "../support/eventually.ts";
import { cardBody, json, MASTERCARD, VISA } from "./fixtures.ts";

// The vault's promise (docs/vault.md 'The vault'): after tokenizing cards the full number appears nowhere in clear —
// not in the database files, not in logs, not in any error body — and a restart on the same DATA_DIR keeps
// the data and prints no new key. Uses a real file-backed store, as `npm start` does. Webhook signing secrets
// (`whsec_…`) are held to the same rule.

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
  const config = loadConfig({
    NODE_ENV: "development",
    PORT: "0",
    DATA_DIR: dataDir,
    LOG_LEVEL: "debug",
    PRODUCTION_ACQUIRER: "simulator",
    RATE_LIMIT_TEST_PER_SECOND: "100000",
  });
  return startServer({ config, logger });
}

// File-backed servers started, stopped and started again, dozens of requests each: longer than vitest's
// default limit allows on a busy machine.
describe("card data at rest, in logs and across restarts", { timeout: 90_000 }, () => {
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

    // Webhook signing secrets: shown once, stored only sealed under the vault's master key.
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
    await eventually(
      "the test delivery's attempt",
      async () => json(await fetch(`${first.url}/v1/webhook_deliveries/${deliveryId}`, { headers: auth })),
      (delivery) => delivery.attempt_count > 0,
    );
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

  it("keeps no secret or card number sent in any odd place, and erased tokens leave nothing behind", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "payments-at-rest-"));
    dirs.push(dataDir);
    const log = capture();
    const server = await boot(dataDir, log.logger);
    const bootstrap = server.bootstrapSecret as string;
    const auth = { authorization: `Bearer ${bootstrap}`, "content-type": "application/json" };
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${server.url}${path}`, { method: "POST", headers: { ...auth, ...headers }, body: JSON.stringify(body) });

    // Keys created and rotated, with Idempotency-Keys (the client sends one on every POST), and replayed.
    const secrets = [bootstrap];
    for (let i = 0; i < 3; i++) {
      const created = await json(
        await post("/v1/service_keys", { name: `k${i}`, scopes: ["vault"] }, { "idempotency-key": `key-${i}` }),
      );
      secrets.push(created.secret);
      const rotated = await json(
        await post(`/v1/service_keys/${created.id}/rotate`, {}, { "idempotency-key": `rot-${i}` }),
      );
      secrets.push(rotated.secret);
      expect(
        (await post("/v1/service_keys", { name: `k${i}`, scopes: ["vault"] }, { "idempotency-key": `key-${i}` }))
          .status,
      ).toBe(409);
    }

    // Card numbers in every odd place: query strings with every separator, raw and encoded; a path; an
    // Idempotency-Key; a header; a bad card; and real tokenizations (30 of them, then deleted).
    const pans = ["4783649308815991", VISA, MASTERCARD, "4242424242424241"];
    const seps = [
      " ",
      "+",
      ".",
      "_",
      ",",
      "-",
      "/",
      "%20",
      "%2D",
      "%2F",
      "%09",
      "%0A",
      "%2B",
      "%C2%A0",
      "%2C",
      "%2E",
      "%5F",
    ];
    for (const sep of seps) {
      const grouped = (pans[0] as string).match(/.{4}/g)?.join(sep) as string;
      await fetch(`${server.url}/v1/merchants?status=${grouped}`, { headers: auth });
      await fetch(`${server.url}/v1/cards/${grouped}`, { headers: auth });
    }
    await post("/v1/merchants", { name: "odd" }, { "idempotency-key": VISA, "x-card": MASTERCARD });
    await post("/v1/tokens", cardBody("4242424242424241"));
    const sealed: string[] = [];
    const tokenIds: string[] = [];
    for (let i = 0; i < 30; i++) {
      const token = await json(
        await post("/v1/tokens", cardBody(i % 2 ? VISA : MASTERCARD), { "idempotency-key": `tok-${i}` }),
      );
      tokenIds.push(token.id);
      const stored = await server.store.get("tokens", token.id);
      sealed.push(stored?.sealed?.wrapped_dek as string, stored?.sealed?.sealed_pan as string);
    }
    const files = () =>
      Buffer.concat(
        readdirSync(dataDir)
          .map((f) => join(dataDir, f))
          .filter((f) => statSync(f).isFile())
          .map((f) => readFileSync(f)),
      );
    expect(sealed.filter((x) => files().includes(x)).length).toBeGreaterThan(0); // they were there
    for (const id of tokenIds)
      expect((await fetch(`${server.url}/v1/tokens/${id}`, { method: "DELETE", headers: auth })).status).toBe(200);

    // While the server still runs (WAL included), and after it stops.
    const check = (where: string) => {
      const bytes = files();
      const text = bytes.toString("latin1");
      expect(
        sealed.filter((x) => bytes.includes(x)),
        `erased key material in ${where}`,
      ).toEqual([]);
      for (const secret of secrets) expect(bytes.includes(secret), `a secret in ${where}`).toBe(false);
      for (const pan of pans) expect(cardPattern(pan).test(text), `${pan} in ${where}`).toBe(false);
    };
    check("the data files of the running server");
    await server.close();
    check("the data files after shutdown");
    const logText = log.lines.join("");
    for (const secret of secrets) expect(logText).not.toContain(secret);
    for (const pan of pans) expect(cardPattern(pan).test(logText), `${pan} in the log`).toBe(false);
    expect(logText).toContain("4783 **** **** 5991");
  });
});

/** The number's digits with up to three separators (raw or percent-encoded) between any two. */
function cardPattern(pan: string): RegExp {
  return new RegExp(pan.split("").join("(?:[^0-9]|%[0-9A-Fa-f]{2}){0,3}"));
}
