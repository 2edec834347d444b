import { availableParallelism } from "node:os";
import { isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { acquirerSettings, adyenComplete, hmacKeysOnce } from "./config/acquirers.ts";
import { consoleSettings } from "./config/console.ts";
import { ConfigError, type ConfigGroup, type Rule, shapeOf } from "./config/kit.ts";
import { lifecycleSettings } from "./config/lifecycles.ts";
import { moneySettings } from "./config/money.ts";
import { metricsApart, observabilitySettings } from "./config/observability.ts";
import { rateLimitGroup } from "./config/rate-limits.ts";
import { sandboxSettings } from "./config/sandboxes.ts";
import { serverSettings } from "./config/server.ts";
import { storeSettings } from "./config/store.ts";
import { noTestHooksInProduction, testSettings } from "./config/tests.ts";
import { vaultKeysInProduction, vaultKeysTogether, vaultSettings } from "./config/vault.ts";
import { webhookSettings } from "./config/webhooks.ts";

// The one configuration schema: every setting comes from the environment, is validated here at start-up and
// documented in .env.example and docs/operating.md "Configuration". Nothing else reads process.env.
// The settings are declared by concern, one group a file in config/ (key, type and default, meaning,
// secret or not: config/kit.ts); this file composes the groups and the rules across settings. A new
// setting goes into its concern's group (config.test.ts checks the documents list exactly these keys).

/** Every group of settings, in the order .env.example and docs/operating.md mostly follow. */
export const CONFIG_GROUPS = [
  serverSettings,
  storeSettings,
  vaultSettings,
  observabilitySettings,
  rateLimitGroup,
  moneySettings,
  lifecycleSettings,
  sandboxSettings,
  webhookSettings,
  consoleSettings,
  acquirerSettings,
  testSettings,
] as const satisfies readonly ConfigGroup[];

const settings = z.object({
  ...shapeOf(serverSettings),
  ...shapeOf(storeSettings),
  ...shapeOf(vaultSettings),
  ...shapeOf(observabilitySettings),
  ...shapeOf(rateLimitGroup),
  ...shapeOf(moneySettings),
  ...shapeOf(lifecycleSettings),
  ...shapeOf(sandboxSettings),
  ...shapeOf(webhookSettings),
  ...shapeOf(consoleSettings),
  ...shapeOf(acquirerSettings),
  ...shapeOf(testSettings),
});

/**
 * The rules across settings, run in this order once every setting is valid on its own (each names the
 * setting at fault).
 */
const RULES: readonly Rule<z.infer<typeof settings>>[] = [
  hmacKeysOnce,
  vaultKeysInProduction,
  noTestHooksInProduction,
  adyenComplete,
  metricsApart,
  vaultKeysTogether,
];

export const ConfigSchema = settings.superRefine((c, ctx) => {
  for (const rule of RULES) {
    rule(c, (key, message) => ctx.addIssue({ code: "custom", path: [key], message }));
  }
});

export type RawConfig = z.infer<typeof ConfigSchema>;

export interface Config extends Omit<RawConfig, "BASE_URL" | "VALIDATE_RESPONSES" | "LOG_FORMAT" | "WORKERS"> {
  BASE_URL: string;
  VALIDATE_RESPONSES: boolean;
  LOG_FORMAT: "pretty" | "json";
  WORKERS: number;
}

export { ConfigError };

/**
 * The server's folder (`server/`): this file is in server/src/ when run from the sources and bundled
 * into server/dist/ in the production build, one level below it either way.
 */
const SERVER_FOLDER = fileURLToPath(new URL("..", import.meta.url));

/**
 * One rule for a relative DATA_DIR (docs/operating.md "Configuration"): from the server's folder, whatever
 * the working directory, so `npm start` (run in server/), `node server/dist/main.js` and
 * `node server/dist/cli.js` run from the repository root by a process manager all open the same store.
 */
function dataDir(value: string): string {
  return value === ":memory:" || isAbsolute(value) ? value : resolve(SERVER_FOLDER, value);
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
    DATA_DIR: dataDir(c.DATA_DIR),
    BASE_URL: (c.BASE_URL ?? `http://${c.HOST}:${c.PORT}`).replace(/\/+$/, ""),
    VALIDATE_RESPONSES: c.VALIDATE_RESPONSES ?? c.NODE_ENV !== "production",
    LOG_FORMAT: c.LOG_FORMAT ?? (c.NODE_ENV === "development" ? "pretty" : "json"),
    WORKERS: c.WORKERS ?? (c.NODE_ENV === "production" && c.MONGODB_URI ? availableParallelism() : 1),
  };
}

// The settings each part of the server takes, read off the configuration in one place each (their groups).
export { adyenHmacKeys } from "./config/acquirers.ts";
export { type DomainSettings, domainSettings, type SettingsOf } from "./config/domain-settings.ts";
export { moneyRules } from "./config/money.ts";
export { rateLimitSettings } from "./config/rate-limits.ts";
