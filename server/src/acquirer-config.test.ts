import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { acquirerProblem, adyenSettings, processorsFor } from "./acquirers.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { createLogger } from "./logger.ts";
import { startServer } from "./server.ts";

// PRODUCTION_ACQUIRER and SANDBOX_ACQUIRER (docs/operating.md "Configuration"; docs/acquirer-port.md):
// production has no acquirer unless one is named, `simulator` there is said out loud at start, and
// `adyen` wires the Adyen connector once its settings are complete, never a simulated stand-in for it.

const ADYEN = {
  ADYEN_API_KEY: "AQE_test",
  ADYEN_MERCHANT_ACCOUNT: "ShopECOM",
  ADYEN_HMAC_KEYS: "44782DEF",
  ADYEN_ENVIRONMENT: "test",
};

describe("acquirer settings", () => {
  it("gives production no acquirer by default, and the sandbox the simulator", () => {
    const c = loadConfig({});
    expect(c.PRODUCTION_ACQUIRER).toBeUndefined();
    expect(c.SANDBOX_ACQUIRER).toBe("simulator");
    const processors = processorsFor(c);
    expect(processors.live).toBeNull();
    expect(processors.sandbox).toBeDefined();
    expect(processorsFor(loadConfig({ PRODUCTION_ACQUIRER: "simulator" })).live).not.toBeNull();
  });

  it("refuses other values, and adyen without its settings, naming each", () => {
    expect(() => loadConfig({ PRODUCTION_ACQUIRER: "stripe" })).toThrow(/PRODUCTION_ACQUIRER/);
    let message = "";
    try {
      loadConfig({ PRODUCTION_ACQUIRER: "adyen" });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      message = (err as Error).message;
    }
    for (const key of ["ADYEN_API_KEY", "ADYEN_MERCHANT_ACCOUNT", "ADYEN_HMAC_KEYS", "ADYEN_ENVIRONMENT"]) {
      expect(message).toContain(`${key}: is required when PRODUCTION_ACQUIRER`);
    }
    expect(() => loadConfig({ PRODUCTION_ACQUIRER: "adyen", ...ADYEN, ADYEN_ENVIRONMENT: "live" })).toThrow(
      /ADYEN_LIVE_URL_PREFIX: is required when ADYEN_ENVIRONMENT is live/,
    );
    expect(() => loadConfig({ SANDBOX_ACQUIRER: "adyen" })).toThrow(/ADYEN_API_KEY: is required when SANDBOX_ACQUIRER/);
    expect(() => loadConfig({ SANDBOX_ACQUIRER: "adyen", ...ADYEN })).not.toThrow();
    // The sandbox never takes real money, and a test address never stands in for Adyen's live one.
    const live = { ...ADYEN, ADYEN_ENVIRONMENT: "live", ADYEN_LIVE_URL_PREFIX: "1797a841fbb37ca7-ShopECOM" };
    expect(() => loadConfig({ SANDBOX_ACQUIRER: "adyen", ...live })).toThrow(
      /SANDBOX_ACQUIRER: adyen with ADYEN_ENVIRONMENT=live/,
    );
    expect(() =>
      loadConfig({ PRODUCTION_ACQUIRER: "adyen", ...live, ADYEN_CHECKOUT_URL: "http://127.0.0.1:9/" }),
    ).toThrow(/ADYEN_CHECKOUT_URL: is for tests and staging/);
    expect(() => loadConfig({ SANDBOX_ACQUIRER: "adyen", ...ADYEN, ADYEN_API_KEY_FILE: "/run/secrets/adyen" })).toThrow(
      /ADYEN_API_KEY_FILE: set ADYEN_API_KEY or ADYEN_API_KEY_FILE, not both/,
    );
  });

  it("refuses TEST_ACQUIRER_URL in production", () => {
    const key = Buffer.alloc(32, 1).toString("base64");
    const keys = { VAULT_MASTER_KEY: key, VAULT_FINGERPRINT_KEY: Buffer.alloc(32, 2).toString("base64") };
    expect(() => loadConfig({ NODE_ENV: "production", ...keys, TEST_ACQUIRER_URL: "http://127.0.0.1:9/" })).toThrow(
      /TEST_ACQUIRER_URL: is for tests only/,
    );
  });

  it("wires Adyen where an environment says so, on Adyen's own endpoints unless a test address is given", () => {
    const live = loadConfig({
      PRODUCTION_ACQUIRER: "adyen",
      ...ADYEN,
      ADYEN_ENVIRONMENT: "live",
      ADYEN_LIVE_URL_PREFIX: "1797a841fbb37ca7-ShopECOM",
    });
    expect(acquirerProblem(live)).toBeNull();
    expect(adyenSettings(live)).toMatchObject({
      apiKey: "AQE_test",
      merchantAccount: "ShopECOM",
      checkoutUrl: "https://1797a841fbb37ca7-ShopECOM-checkout-live.adyenpayments.com/checkout/v71",
      payoutUrl: "https://1797a841fbb37ca7-ShopECOM-pal-live.adyenpayments.com/pal/servlet/Payout/v50",
      timeoutMs: 30_000,
    });
    const processors = processorsFor(live);
    expect(processors.live).not.toBeNull();
    expect(processors.live).not.toBe(processors.sandbox);
    const staging = loadConfig({ SANDBOX_ACQUIRER: "adyen", ...ADYEN, ADYEN_CHECKOUT_URL: "http://127.0.0.1:9/co" });
    expect(adyenSettings(staging)).toMatchObject({
      checkoutUrl: "http://127.0.0.1:9/co",
      payoutUrl: "https://pal-test.adyen.com/pal/servlet/Payout/v50",
    });
    expect(processorsFor(staging).live).toBeNull();
  });

  it("reads the API key from ADYEN_API_KEY_FILE, naming that setting (never the contents) when it cannot", () => {
    const dir = mkdtempSync(join(tmpdir(), "adyen-key-"));
    const file = join(dir, "api-key");
    writeFileSync(file, "AQE_from_file\n");
    const { ADYEN_API_KEY: _unused, ...rest } = ADYEN;
    const config = loadConfig({ SANDBOX_ACQUIRER: "adyen", ...rest, ADYEN_API_KEY_FILE: file });
    expect(adyenSettings(config).apiKey).toBe("AQE_from_file");
    writeFileSync(file, "  \n");
    expect(acquirerProblem(config)?.message).toBe(`ADYEN_API_KEY_FILE: ${file} is empty`);
    const missing = loadConfig({ SANDBOX_ACQUIRER: "adyen", ...rest, ADYEN_API_KEY_FILE: join(dir, "nope") });
    expect(acquirerProblem(missing)?.message).toMatch(/^ADYEN_API_KEY_FILE: cannot read .*nope \(ENOENT\)$/);
    rmSync(dir, { recursive: true });
  });

  it("sends payouts' confirmations with the reviewer's key when one is set, from the setting or a file; else the API key", () => {
    const base = { SANDBOX_ACQUIRER: "adyen", ...ADYEN };
    expect(adyenSettings(loadConfig(base)).payoutReviewerApiKey).toBe("AQE_test");
    expect(adyenSettings(loadConfig({ ...base, ADYEN_PAYOUT_REVIEWER_API_KEY: "AQE_reviewer" }))).toMatchObject({
      apiKey: "AQE_test",
      payoutReviewerApiKey: "AQE_reviewer",
    });
    const dir = mkdtempSync(join(tmpdir(), "adyen-reviewer-"));
    const file = join(dir, "reviewer");
    writeFileSync(file, "AQE_reviewer_file\n");
    const fromFile = loadConfig({ ...base, ADYEN_PAYOUT_REVIEWER_API_KEY_FILE: file });
    expect(adyenSettings(fromFile).payoutReviewerApiKey).toBe("AQE_reviewer_file");
    writeFileSync(file, "");
    expect(acquirerProblem(fromFile)?.message).toBe(`ADYEN_PAYOUT_REVIEWER_API_KEY_FILE: ${file} is empty`);
    rmSync(dir, { recursive: true });
    expect(() =>
      loadConfig({ ...base, ADYEN_PAYOUT_REVIEWER_API_KEY: "AQE_reviewer", ADYEN_PAYOUT_REVIEWER_API_KEY_FILE: file }),
    ).toThrow(
      /ADYEN_PAYOUT_REVIEWER_API_KEY_FILE: set ADYEN_PAYOUT_REVIEWER_API_KEY or ADYEN_PAYOUT_REVIEWER_API_KEY_FILE, not both/,
    );
  });

  it("starts with adyen and never logs or echoes its secrets", async () => {
    const secret = "AQE_very_secret_key_0123456789";
    const reviewer = "AQE_very_secret_reviewer_key_9876543210";
    const hmac = "44782DEF547AAA06C910C43932B1EB0C";
    const lines: string[] = [];
    const logger = createLogger("debug", { write: (line: string) => lines.push(line) });
    const config = loadConfig({
      PRODUCTION_ACQUIRER: "adyen",
      SANDBOX_ACQUIRER: "adyen",
      ...ADYEN,
      ADYEN_API_KEY: secret,
      ADYEN_PAYOUT_REVIEWER_API_KEY: reviewer,
      ADYEN_HMAC_KEYS: hmac,
      ADYEN_CHECKOUT_URL: "http://127.0.0.1:9/checkout",
      DATA_DIR: ":memory:",
      PORT: "0",
      LOG_LEVEL: "debug",
    });
    const server = await startServer({ config, logger });
    await server.close();
    expect(lines.some((line) => line.includes("ShopECOM") && line.includes("127.0.0.1:9/checkout"))).toBe(true);
    expect(lines.some((line) => line.includes('"payout_reviewer_key":"set"'))).toBe(true);
    for (const line of lines) {
      expect(line).not.toContain(secret);
      expect(line).not.toContain(reviewer);
      expect(line).not.toContain(hmac);
    }
    // A configuration error lists the bad settings, never the values of the good ones.
    let message = "";
    try {
      loadConfig({
        PRODUCTION_ACQUIRER: "adyen",
        ADYEN_API_KEY: secret,
        ADYEN_PAYOUT_REVIEWER_API_KEY: reviewer,
        ADYEN_HMAC_KEYS: hmac,
      });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain("ADYEN_MERCHANT_ACCOUNT");
    expect(message).not.toContain(secret);
    expect(message).not.toContain(reviewer);
    expect(message).not.toContain(hmac);
  });

  it("warns at start when production goes through the simulator", async () => {
    const lines: string[] = [];
    const logger = createLogger("warn", { write: (line: string) => lines.push(line) });
    const server = await startServer({
      config: loadConfig({ PRODUCTION_ACQUIRER: "simulator", DATA_DIR: ":memory:", PORT: "0", LOG_LEVEL: "warn" }),
      logger,
    });
    await server.close();
    expect(lines.some((l) => l.includes("PRODUCTION_ACQUIRER") && l.includes("simulator"))).toBe(true);
  });
});
