import { existsSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CONFIG_GROUPS, ConfigError, ConfigSchema, domainSettings, loadConfig } from "./config.ts";

describe("configuration (one schema, validated at start-up)", () => {
  it("has working defaults for development", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      NODE_ENV: "development",
      PORT: 3000,
      HOST: "127.0.0.1",
      BASE_URL: "http://127.0.0.1:3000",
      DATA_DIR: fileURLToPath(new URL("../data", import.meta.url)),
      VALIDATE_RESPONSES: true,
      IDEMPOTENCY_TTL_SECONDS: 86400,
    });
    expect(c.MONGODB_URI).toBeUndefined();
  });

  it("reads a relative DATA_DIR from the server's folder, whatever the working directory; keeps absolute ones and :memory:", () => {
    const server = fileURLToPath(new URL("..", import.meta.url));
    expect(loadConfig({ DATA_DIR: "data" }).DATA_DIR).toBe(`${server}data`);
    expect(loadConfig({ DATA_DIR: "../elsewhere/store" }).DATA_DIR).toBe(
      fileURLToPath(new URL("../../elsewhere/store", import.meta.url)),
    );
    expect(loadConfig({ DATA_DIR: "/var/lib/payments" }).DATA_DIR).toBe("/var/lib/payments");
    expect(loadConfig({ DATA_DIR: ":memory:" }).DATA_DIR).toBe(":memory:");
  });

  it("refuses production without explicit vault keys, naming both settings", () => {
    expect(() => loadConfig({ NODE_ENV: "production" })).toThrow(ConfigError);
    try {
      loadConfig({ NODE_ENV: "production" });
    } catch (err) {
      expect((err as Error).message).toMatch(/VAULT_MASTER_KEY: is required in production/);
      expect((err as Error).message).toMatch(/VAULT_FINGERPRINT_KEY: is required in production/);
    }
    const key = Buffer.alloc(32, 1).toString("base64");
    const other = Buffer.alloc(32, 2).toString("base64");
    const prod = loadConfig({ NODE_ENV: "production", VAULT_MASTER_KEY: key, VAULT_FINGERPRINT_KEY: other });
    expect(prod.VALIDATE_RESPONSES).toBe(false);
  });

  it("names every bad setting, and never echoes a secret's value", () => {
    const secret = "not-a-real-key-but-secret-looking";
    try {
      loadConfig({ PORT: "70000", LOG_LEVEL: "loud", SUPPORTED_CURRENCIES: "USD,ABC", VAULT_MASTER_KEY: secret });
      expect.unreachable();
    } catch (err) {
      const message = (err as Error).message;
      expect(message).toMatch(/PORT/);
      expect(message).toMatch(/LOG_LEVEL/);
      expect(message).toMatch(/SUPPORTED_CURRENCIES: not ISO 4217 currencies: ABC/);
      expect(message).not.toContain(secret);
    }
    // Rules across settings are checked once each setting is valid on its own.
    expect(() => loadConfig({ VAULT_MASTER_KEY: secret })).toThrow(/VAULT_FINGERPRINT_KEY: set both/);
  });

  it("derives BASE_URL from HOST and PORT unless given, without a trailing slash", () => {
    expect(loadConfig({ HOST: "0.0.0.0", PORT: "8080" }).BASE_URL).toBe("http://0.0.0.0:8080");
    expect(loadConfig({ BASE_URL: "https://pay.example.com/" }).BASE_URL).toBe("https://pay.example.com");
  });

  it("has the webhook defaults docs/operating.md documents, and names a bad retry schedule", () => {
    expect(loadConfig({})).toMatchObject({
      WEBHOOK_DISPATCHER: true,
      WEBHOOK_TIMEOUT_SECONDS: 10,
      WEBHOOK_RETRY_SCHEDULE: "60,300,1800,3600,7200,14400,28800,43200,43200,43200,43200,43200",
      WEBHOOK_SANDBOX_RETRY_SCHEDULE: "5,30,120,600,1800,3600",
      WEBHOOK_DISABLE_AFTER_SECONDS: 432000,
      WEBHOOK_SANDBOX_ALLOW_LOOPBACK: true,
      WEBHOOK_SANDBOX_ALLOW_PRIVATE: false,
      WEBHOOK_LOG_RETENTION_DAYS: 30,
    });
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: "60,soon" })).toThrow(
      /WEBHOOK_RETRY_SCHEDULE: "soon" is not a whole number of seconds/,
    );
    expect(() => loadConfig({ WEBHOOK_TIMEOUT_SECONDS: "0" })).toThrow(/WEBHOOK_TIMEOUT_SECONDS/);
    expect(loadConfig({ WEBHOOK_SANDBOX_RETRY_SCHEDULE: "" }).WEBHOOK_SANDBOX_RETRY_SCHEDULE).toBe("");
  });
});

describe("fee schedule", () => {
  it("defaults to no fees; a schedule is handed to the domain; a bad one names FEE_SCHEDULE and what is wrong", () => {
    expect(domainSettings(loadConfig({})).ledger.fees).toEqual({});
    const card = { card: { percent_bps: 290, fixed: { USD: 30 } } };
    expect(domainSettings(loadConfig({ FEE_SCHEDULE: JSON.stringify(card) })).ledger.fees).toEqual(card);
    expect(() => loadConfig({ FEE_SCHEDULE: "{card" })).toThrow(/FEE_SCHEDULE: must be JSON/);
    expect(() => loadConfig({ FEE_SCHEDULE: '{"cash":{"percent_bps":1}}' })).toThrow(
      /FEE_SCHEDULE: "cash" is not a payment method/,
    );
  });
});

describe("numeric settings", () => {
  it("refuse an empty value instead of reading it as 0 (PORT= would otherwise pick a random port)", () => {
    expect(() => loadConfig({ PORT: "" })).toThrow(/PORT: must be a whole number/);
    expect(() => loadConfig({ SETTLEMENT_DELAY_SECONDS: "" })).toThrow(/SETTLEMENT_DELAY_SECONDS/);
  });

  it("accept digits only, within their range", () => {
    expect(loadConfig({ PORT: "0" }).PORT).toBe(0);
    expect(loadConfig({ PORT: "8080" }).PORT).toBe(8080);
    for (const bad of [" 80", "1e3", "0x50", "-1", "80.5", "70000"]) {
      expect(() => loadConfig({ PORT: bad }), bad).toThrow(/PORT/);
    }
  });
});

describe("operations settings", () => {
  it("log human-readable lines in development only, unless LOG_FORMAT says otherwise", () => {
    expect(loadConfig({}).LOG_FORMAT).toBe("pretty");
    expect(loadConfig({ NODE_ENV: "test" }).LOG_FORMAT).toBe("json");
    expect(loadConfig({ LOG_FORMAT: "json" }).LOG_FORMAT).toBe("json");
    expect(() => loadConfig({ LOG_FORMAT: "fancy" })).toThrow(/LOG_FORMAT/);
  });

  it("bound the shutdown drain", () => {
    expect(loadConfig({}).SHUTDOWN_TIMEOUT_SECONDS).toBe(10);
    expect(() => loadConfig({ SHUTDOWN_TIMEOUT_SECONDS: "601" })).toThrow(/SHUTDOWN_TIMEOUT_SECONDS/);
  });

  it("run one worker per core in production on MongoDB and one elsewhere, unless WORKERS says otherwise", () => {
    const keys = {
      VAULT_MASTER_KEY: Buffer.alloc(32, 1).toString("base64"),
      VAULT_FINGERPRINT_KEY: Buffer.alloc(32, 2).toString("base64"),
    };
    expect(loadConfig({}).WORKERS).toBe(1);
    expect(loadConfig({ NODE_ENV: "test" }).WORKERS).toBe(1);
    expect(loadConfig({ NODE_ENV: "production", ...keys }).WORKERS).toBe(1);
    const mongo = { MONGODB_URI: "mongodb://127.0.0.1:27017/?replicaSet=rs0" };
    expect(loadConfig({ NODE_ENV: "production", ...mongo, ...keys }).WORKERS).toBe(availableParallelism());
    expect(loadConfig({ NODE_ENV: "production", WORKERS: "2", ...keys }).WORKERS).toBe(2);
    expect(loadConfig({ WORKERS: "3" }).WORKERS).toBe(3);
    for (const bad of ["0", "257", "two", ""]) expect(() => loadConfig({ WORKERS: bad })).toThrow(/WORKERS/);
  });
});

describe("metrics settings", () => {
  it("serve no metrics unless METRICS_PORT is set, and bind loopback by default", () => {
    expect(loadConfig({}).METRICS_PORT).toBeUndefined();
    expect(loadConfig({}).METRICS_HOST).toBe("127.0.0.1");
    expect(loadConfig({ METRICS_PORT: "9464", METRICS_HOST: "10.0.0.5" })).toMatchObject({
      METRICS_PORT: 9464,
      METRICS_HOST: "10.0.0.5",
    });
    expect(loadConfig({ METRICS_PORT: "0", PORT: "0" }).METRICS_PORT).toBe(0);
  });

  it("refuse the API's own port: the metrics are never served where the API is", () => {
    expect(() => loadConfig({ METRICS_PORT: "3000" })).toThrow(/METRICS_PORT: must differ from PORT/);
    expect(() => loadConfig({ METRICS_PORT: "8080", PORT: "8080" })).toThrow(/METRICS_PORT/);
    for (const bad of ["65536", "-1", "x", ""]) expect(() => loadConfig({ METRICS_PORT: bad })).toThrow(/METRICS_PORT/);
    expect(() => loadConfig({ METRICS_HOST: "" })).toThrow(/METRICS_HOST/);
  });
});

describe("documentation of the settings", () => {
  // Every key of the one schema is documented in .env.example and the configuration table of
  // docs/operating.md (and nothing else is), so an operator never meets a setting the documents do not name.
  // The repository's root: the nearest folder above with .env.example (two up from here, more from the
  // copy of server/ that a mutation run tests in).
  let root = new URL("../../", import.meta.url);
  while (!existsSync(new URL(".env.example", root)) && root.pathname !== "/") root = new URL("../", root);
  const keys = Object.keys(ConfigSchema.shape).sort();

  it("lists every setting in .env.example, and no other", () => {
    const text = readFileSync(new URL(".env.example", root), "utf8");
    const listed = [...text.matchAll(/^#? ?([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]);
    expect([...new Set(listed)].sort()).toEqual(keys);
  });

  it("describes every setting in the configuration table of docs/operating.md, and no other", () => {
    const text = readFileSync(new URL("docs/operating.md", root), "utf8");
    const table = text.slice(text.indexOf("| Variable | Default | Meaning |"));
    const rows = table.slice(0, table.indexOf("\n\n")).split("\n").slice(2);
    const named = rows.flatMap((row) =>
      [...(row.split(" | ")[0] ?? "").matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]),
    );
    expect([...new Set(named)].sort()).toEqual(keys);
  });

  it("has each setting in one group only, with its meaning written out", () => {
    const declared = CONFIG_GROUPS.flatMap((g) => Object.keys(g.settings));
    expect(declared.sort()).toEqual(keys);
    for (const g of CONFIG_GROUPS) {
      for (const [key, s] of Object.entries(g.settings)) expect(s.doc.length, key).toBeGreaterThan(20);
    }
  });

  it("gives in .env.example the declared default of every setting it sets, and never a secret's value", () => {
    expect(envExampleProblems(readFileSync(new URL(".env.example", root), "utf8"))).toEqual([]);
  });

  it("would see a wrong default, a setting without one, and a secret's value (fixture)", () => {
    expect(
      envExampleProblems("PORT=3001\nHOST=127.0.0.1\n# VAULT_MASTER_KEY=abc\nWORKERS=2\n# METRICS_PORT=9464"),
    ).toEqual([
      "PORT=3001 is not its default",
      'VAULT_MASTER_KEY: a secret, only ever "# VAULT_MASTER_KEY="',
      "WORKERS=2 is not its default",
    ]);
  });
});

/**
 * What is wrong in an .env.example: a setting given (uncommented) with other than its declared default,
 * one with no default given at all, or a secret with a value (even commented out: copied, it would be used).
 */
function envExampleProblems(text: string): string[] {
  const settings = new Map(CONFIG_GROUPS.flatMap((g) => Object.entries(g.settings)));
  const problems: string[] = [];
  for (const [, commented, key = "", value = ""] of text.matchAll(/^(# ?)?([A-Z][A-Z0-9_]+)=(.*)$/gm)) {
    const s = settings.get(key);
    if (!s) continue;
    if (s.secret && (!commented || value !== "")) problems.push(`${key}: a secret, only ever "# ${key}="`);
    if (commented) continue;
    const given = s.schema.safeParse(value);
    const fallback = s.schema.safeParse(undefined);
    if (!given.success || !fallback.success || JSON.stringify(given.data) !== JSON.stringify(fallback.data)) {
      problems.push(`${key}=${value} is not its default`);
    }
  }
  return problems;
}
