import { randomBytes } from "node:crypto";
import { payoutRailFor, processorsFor } from "../acquirers.ts";
import { loadOrCreateDevVaultKeys } from "../adapters/vault-key-file.ts";
import { createHttpWebhookSender, systemResolver } from "../adapters/webhook-sender.ts";
import { type Config, domainSettings, moneyRules } from "../config.ts";
import { createDomain, type Domain, type DomainDeps } from "../domain/index.ts";
import type { Now } from "../domain/kernel/caller.ts";
import type { DomainLog } from "../domain/kernel/log.ts";
import type { DomainObserver } from "../domain/kernel/observer.ts";
import type { VaultKeys } from "../domain/vault/crypto.ts";
import { parseVaultKeys, VaultKeyError } from "../domain/vault/keys.ts";
import type { Resolver } from "../domain/webhooks/ssrf.ts";
import { codeOf, messageOf, StartupError } from "../startup-error.ts";
import { dataDirProblem, dataLocation, IN_MEMORY } from "./data-dir.ts";
import type { ServerStore } from "./store.ts";

/** Which setting a configured key that cannot be used came from (VaultKeyError's `key`). */
const VAULT_SETTING = {
  masterKey: "VAULT_MASTER_KEY",
  // The two keys being one and the same is fixed by giving the fingerprint key its own value.
  fingerprintKey: "VAULT_FINGERPRINT_KEY",
  kekId: "VAULT_MASTER_KEY",
} as const;

function readVaultKeys(config: Config): VaultKeys {
  if (config.VAULT_MASTER_KEY && config.VAULT_FINGERPRINT_KEY) {
    return parseVaultKeys({ masterKey: config.VAULT_MASTER_KEY, fingerprintKey: config.VAULT_FINGERPRINT_KEY });
  }
  // The config schema refuses production without explicit keys; development keeps generated ones under DATA_DIR.
  if (config.DATA_DIR === IN_MEMORY) {
    return parseVaultKeys({
      masterKey: randomBytes(32).toString("base64"),
      fingerprintKey: randomBytes(32).toString("base64"),
    });
  }
  return loadOrCreateDevVaultKeys(config.DATA_DIR);
}

/**
 * The vault keys the configuration names, or a StartupError naming the setting actually at fault: the
 * configured key that does not decode (VAULT_MASTER_KEY or VAULT_FINGERPRINT_KEY), or DATA_DIR when
 * development's key file cannot be read or made. Anything else is a bug and keeps its stack.
 */
export function vaultKeysFor(config: Config): VaultKeys {
  try {
    return readVaultKeys(config);
  } catch (err) {
    if (config.VAULT_MASTER_KEY && config.VAULT_FINGERPRINT_KEY) {
      if (err instanceof VaultKeyError) throw new StartupError(VAULT_SETTING[err.key], err.message, { cause: err });
      throw err;
    }
    if (config.DATA_DIR === IN_MEMORY) throw err;
    if (codeOf(err)) throw dataDirProblem(config, err);
    throw new StartupError("DATA_DIR", `${dataLocation(config)}/vault-keys.json: ${messageOf(err)}`, { cause: err });
  }
}

/** What embedding code and tests may swap in the webhook delivery path. */
export interface WebhookOverrides {
  /** Resolves endpoint host names at registration and at connection time (default: the system resolver). */
  resolve?: Resolver;
  /** The retry jitter's random source. */
  random?: () => number;
}

/**
 * The domain as the configuration describes it (the server and the CLI). `baseUrl` gives the server's
 * public address (payment links' `url`); by default BASE_URL. A vault key or key file that cannot be
 * used fails as a StartupError naming its setting (vaultKeysFor); nothing else is blamed on a setting.
 * `sandboxes`: who hosts sandboxes on demand (the account's domain), or which one this domain serves,
 * with that sandbox's own vault keys (server/src/sandboxes/host.ts).
 */
export function domainFor(
  config: Config,
  store: ServerStore,
  now: Now = () => new Date(),
  webhooks: WebhookOverrides & { log?: DomainLog } = {},
  baseUrl: () => string = () => config.BASE_URL,
  observer?: DomainObserver,
  sandboxes: Pick<DomainDeps, "sandboxHost" | "sandbox"> & { vaultKeys?: VaultKeys } = {},
): Domain {
  const resolve = webhooks.resolve ?? systemResolver;
  return createDomain({
    store,
    vaultKeys: sandboxes.vaultKeys ?? vaultKeysFor(config),
    now,
    money: moneyRules(config),
    settings: domainSettings(config),
    processors: processorsFor(config),
    payoutRail: payoutRailFor(config),
    webhookSender: createHttpWebhookSender({ resolve }),
    resolve,
    random: webhooks.random,
    log: webhooks.log,
    baseUrl,
    observer,
    sandboxHost: sandboxes.sandboxHost,
    sandbox: sandboxes.sandbox,
  });
}
