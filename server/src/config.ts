import { z } from "zod";
import { parseCurrencyList } from "./domain/money.ts";

// The one configuration schema (DESIGN §15): every setting comes from the environment, is validated
// here at start-up and documented in .env.example and the README. Nothing else reads process.env.

const bool = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");
// Whole numbers in decimal digits only: an empty value (`PORT=`) is an error, not 0 (which for PORT
// would mean "any free port"), and neither "1e3" nor " 80" nor "0x50" passes.
const int = (min: number, max: number) =>
  z
    .string()
    .regex(/^[0-9]+$/, "must be a whole number written in digits")
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

export const ConfigSchema = z
  .object({
    NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
    PORT: int(0, 65535).default(3000),
    HOST: z.string().min(1).default("127.0.0.1"),
    /** The public base address, used in `url` fields and the OpenAPI `servers` entry. */
    BASE_URL: z.url().optional(),
    DATA_DIR: z.string().min(1).default("./data"),
    /** Unset: the embedded SQLite store under DATA_DIR. Set: MongoDB (a replica set; money changes use transactions). */
    MONGODB_URI: z.string().min(1).optional(),
    MONGODB_DB: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,63}$/)
      .default("payments"),
    /** 32-byte master key (base64 or hex) that wraps each token's data key. Required in production. */
    VAULT_MASTER_KEY: z.string().min(1).optional(),
    /** 32-byte key (base64 or hex) for card fingerprints; must differ from the master key. Required in production. */
    VAULT_FINGERPRINT_KEY: z.string().min(1).optional(),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    /** Validate every response against the contract (default: on except in production). */
    VALIDATE_RESPONSES: bool.optional(),
    /** Largest accepted request body, in bytes. */
    BODY_LIMIT_BYTES: int(1024, 10 * 1024 * 1024).default(100 * 1024),
    /** How long an Idempotency-Key is remembered (DESIGN §4: 24 h). */
    IDEMPOTENCY_TTL_SECONDS: int(60, 7 * 24 * 3600).default(24 * 3600),
    /** Whether the request log (for the console) is written to the store. */
    REQUEST_LOG: bool.default(true),
    /** ISO 4217 codes the platform accepts, comma-separated. */
    SUPPORTED_CURRENCIES: z
      .string()
      .default("USD,EUR,GBP,BRL,MXN,JPY,KWD,CAD,AUD,CHF")
      .superRefine((list, ctx) => {
        try {
          parseCurrencyList(list);
        } catch (err) {
          ctx.addIssue({ code: "custom", message: (err as Error).message });
        }
      }),
    /** The largest amount of one charge, in major units of its currency (so JPY 999999, USD 999999.00). */
    MAX_AMOUNT: int(1, 1_000_000_000).default(999_999),
    /** How long production captures stay `pending` before they are `available`; the sandbox settles at once. */
    SETTLEMENT_DELAY_SECONDS: int(0, 30 * 86400).default(2 * 86400),
    /** How often the background jobs run: expiring unpaid local payments and settling pending funds. */
    JOBS_INTERVAL_SECONDS: int(1, 86400).default(60),

    // Operations (issue #13): logs and shutdown.
    /** `pretty` (human-readable lines, pino-pretty) or `json` (one JSON object a line). Default: pretty in development only. */
    LOG_FORMAT: z.enum(["pretty", "json"]).optional(),
    /**
     * On SIGTERM/SIGINT: how long in-flight requests and background jobs may take to finish before
     * their connections are cut and the store is closed anyway.
     */
    SHUTDOWN_TIMEOUT_SECONDS: int(0, 600).default(10),
  })
  .superRefine((c, ctx) => {
    if (c.NODE_ENV === "production") {
      for (const key of ["VAULT_MASTER_KEY", "VAULT_FINGERPRINT_KEY"] as const) {
        if (!c[key]) {
          ctx.addIssue({
            code: "custom",
            path: [key],
            message: "is required in production (generate one with: openssl rand -base64 32)",
          });
        }
      }
    }
    if (Boolean(c.VAULT_MASTER_KEY) !== Boolean(c.VAULT_FINGERPRINT_KEY)) {
      ctx.addIssue({
        code: "custom",
        path: ["VAULT_FINGERPRINT_KEY"],
        message: "set both VAULT_MASTER_KEY and VAULT_FINGERPRINT_KEY, or neither (development generates both)",
      });
    }
  });

export type RawConfig = z.infer<typeof ConfigSchema>;

export interface Config extends Omit<RawConfig, "BASE_URL" | "VALIDATE_RESPONSES" | "LOG_FORMAT"> {
  BASE_URL: string;
  VALIDATE_RESPONSES: boolean;
  LOG_FORMAT: "pretty" | "json";
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Parses the environment; throws ConfigError listing every bad setting (values of secrets are never echoed). */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".") || "(config)"}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const c = parsed.data;
  return {
    ...c,
    BASE_URL: (c.BASE_URL ?? `http://${c.HOST}:${c.PORT}`).replace(/\/+$/, ""),
    VALIDATE_RESPONSES: c.VALIDATE_RESPONSES ?? c.NODE_ENV !== "production",
    LOG_FORMAT: c.LOG_FORMAT ?? (c.NODE_ENV === "development" ? "pretty" : "json"),
  };
}
