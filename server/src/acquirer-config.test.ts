import { describe, expect, it } from "vitest";
import { acquirerProblem, processorsFor } from "./acquirers.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { createLogger } from "./logger.ts";
import { startServer } from "./server.ts";
import { StartupError } from "./startup-error.ts";

// PRODUCTION_ACQUIRER and SANDBOX_ACQUIRER (docs/operating.md "Configuration"; docs/acquirer-port.md):
// production has no acquirer unless one is named, `simulator` there is said out loud at start, and
// `adyen` is refused until its connector is wired in, never simulated in its place.

const ADYEN = { ADYEN_API_KEY: "AQE_test", ADYEN_MERCHANT_ACCOUNT: "ShopECOM", ADYEN_HMAC_KEY: "44782DEF" };

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
    for (const key of ["ADYEN_API_KEY", "ADYEN_MERCHANT_ACCOUNT", "ADYEN_HMAC_KEY", "ADYEN_LIVE_URL_PREFIX"]) {
      expect(message).toContain(`${key}: is required when PRODUCTION_ACQUIRER`);
    }
    expect(() => loadConfig({ SANDBOX_ACQUIRER: "adyen" })).toThrow(/ADYEN_API_KEY: is required when SANDBOX_ACQUIRER/);
    expect(() => loadConfig({ SANDBOX_ACQUIRER: "adyen", ...ADYEN })).not.toThrow();
  });

  it("refuses TEST_ACQUIRER_URL in production", () => {
    const key = Buffer.alloc(32, 1).toString("base64");
    const keys = { VAULT_MASTER_KEY: key, VAULT_FINGERPRINT_KEY: Buffer.alloc(32, 2).toString("base64") };
    expect(() => loadConfig({ NODE_ENV: "production", ...keys, TEST_ACQUIRER_URL: "http://127.0.0.1:9/" })).toThrow(
      /TEST_ACQUIRER_URL: is for tests only/,
    );
  });

  it("refuses to start with adyen until the connector is wired in, before touching the store", async () => {
    const config = loadConfig({
      PRODUCTION_ACQUIRER: "adyen",
      ...ADYEN,
      ADYEN_LIVE_URL_PREFIX: "1797a841fbb37ca7-ShopECOM",
      DATA_DIR: "/nonexistent/never-made",
    });
    const problem = acquirerProblem(config);
    expect(problem).toBeInstanceOf(StartupError);
    expect(problem?.message).toMatch(
      /^PRODUCTION_ACQUIRER: adyen: the Adyen connector is not wired into this server yet/,
    );
    // DATA_DIR could not be made: the acquirer is refused first, so that is not what the start reports.
    await expect(startServer({ config, logger: createLogger("silent") })).rejects.toThrow(
      /^PRODUCTION_ACQUIRER: adyen/,
    );
    expect(acquirerProblem(loadConfig({}))).toBeNull();
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
