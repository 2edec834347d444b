import { readFileSync } from "node:fs";
import {
  type Acquirer,
  type AdyenSettings,
  adyenEndpoints,
  createAdyenConnector,
  createAdyenPayoutRail,
  createAdyenProcessor,
} from "./adapters/adyen/index.ts";
import { createSimulatorPayoutRail } from "./adapters/payout-rail-simulator.ts";
import { createHttpProcessor } from "./adapters/processor-http.ts";
import { createSimulatorProcessor } from "./adapters/processor-simulator.ts";
import { withSimulatedAcquirerErrors } from "./adapters/simulated-acquirer.ts";
import type { Config } from "./config.ts";
import type { PayoutRail } from "./domain/cashouts/payout-rail.ts";
import type { Processor } from "./domain/charges/processor.ts";
import { errorCode } from "./guards.ts";
import { StartupError } from "./startup-error.ts";

// Each environment's acquirer and payout rail, as PRODUCTION_ACQUIRER and SANDBOX_ACQUIRER say
// (docs/operating.md "Configuration", docs/going-live-with-adyen.md "Settings"):
// - `simulator`: adapters/processor-simulator.ts and the simulated payout rail; no money moves.
// - `adyen`: the Adyen connector (adapters/adyen/) as the Processor and the payout rail, on the account and
//   environment the ADYEN_* settings name. Both environments that say `adyen` share one connector (one
//   account, one ADYEN_ENVIRONMENT; the sandbox is never `live`: config.ts refuses it).
// - production with PRODUCTION_ACQUIRER unset has no acquirer: its money operations answer 503
//   acquirer_not_configured (domain/charges/context.ts processorFor).

/** The Adyen API key, from ADYEN_API_KEY or the file ADYEN_API_KEY_FILE names; a secret, never logged. */
function adyenApiKey(config: Config): string {
  const key = keyFrom(config.ADYEN_API_KEY, config.ADYEN_API_KEY_FILE, "ADYEN_API_KEY_FILE");
  if (key === undefined) throw new StartupError("ADYEN_API_KEY", "is required where an acquirer is adyen");
  return key;
}

/** A secret from its setting, or read from the file its `_FILE` setting names; undefined when neither is set. */
function keyFrom(value: string | undefined, file: string | undefined, fileSetting: string): string | undefined {
  if (value) return value;
  if (!file) return undefined;
  let key: string;
  try {
    key = readFileSync(file, "utf8").trim();
  } catch (err) {
    // The error's code (ENOENT, EACCES) and the path only: never the file's contents.
    const code = errorCode(err) ?? "unreadable";
    throw new StartupError(fileSetting, `cannot read ${file} (${code})`);
  }
  if (key === "") throw new StartupError(fileSetting, `${file} is empty`);
  return key;
}

/** The connector's settings from the configuration; throws a StartupError naming a missing or bad setting. */
export function adyenSettings(config: Config): AdyenSettings {
  const environment = config.ADYEN_ENVIRONMENT;
  if (!environment)
    throw new StartupError("ADYEN_ENVIRONMENT", "is required where an acquirer is adyen (test or live)");
  if (!config.ADYEN_MERCHANT_ACCOUNT) {
    throw new StartupError("ADYEN_MERCHANT_ACCOUNT", "is required where an acquirer is adyen");
  }
  if (environment === "live" && !config.ADYEN_LIVE_URL_PREFIX) {
    throw new StartupError("ADYEN_LIVE_URL_PREFIX", "is required when ADYEN_ENVIRONMENT is live");
  }
  let endpoints: ReturnType<typeof adyenEndpoints>;
  try {
    endpoints = adyenEndpoints(environment, config.ADYEN_LIVE_URL_PREFIX);
  } catch (err) {
    throw new StartupError(
      "ADYEN_LIVE_URL_PREFIX",
      "must be the prefix Adyen gives the account: letters, digits and -",
      {
        cause: err,
      },
    );
  }
  const apiKey = adyenApiKey(config);
  return {
    apiKey,
    // Payout v50's reviewer confirms and declines; unset, the submitter's key does (one credential, both roles).
    payoutReviewerApiKey:
      keyFrom(
        config.ADYEN_PAYOUT_REVIEWER_API_KEY,
        config.ADYEN_PAYOUT_REVIEWER_API_KEY_FILE,
        "ADYEN_PAYOUT_REVIEWER_API_KEY_FILE",
      ) ?? apiKey,
    merchantAccount: config.ADYEN_MERCHANT_ACCOUNT,
    // Tests and staging point these at the stand-in; config.ts refuses them with `live`.
    checkoutUrl: config.ADYEN_CHECKOUT_URL ?? endpoints.checkoutUrl,
    payoutUrl: config.ADYEN_PAYOUT_URL ?? endpoints.payoutUrl,
    disputesUrl: config.ADYEN_DISPUTES_URL ?? endpoints.disputesUrl,
    timeoutMs: config.ADYEN_TIMEOUT_MS,
  };
}

const usesAdyen = (config: Config) => config.PRODUCTION_ACQUIRER === "adyen" || config.SANDBOX_ACQUIRER === "adyen";

/** One connector per configuration (made on first use), shared by the processors and the payout rails. */
const connectors = new WeakMap<Config, Acquirer>();
function adyenConnector(config: Config): Acquirer {
  let connector = connectors.get(config);
  if (!connector) {
    connector = createAdyenConnector(adyenSettings(config));
    connectors.set(config, connector);
  }
  return connector;
}

/**
 * Each environment's acquirer. Production has none while PRODUCTION_ACQUIRER is unset (its money
 * operations answer 503). The sandbox's is wrapped so Sandbox-Simulate `acquirer_error` reaches it.
 */
export function processorsFor(config: Config): { live: Processor | null; sandbox: Processor } {
  const simulator = (): Processor =>
    config.TEST_ACQUIRER_URL ? createHttpProcessor(config.TEST_ACQUIRER_URL) : createSimulatorProcessor();
  const adyen = (): Processor =>
    createAdyenProcessor(adyenConnector(config), {
      // Adyen requires a return address on every payment; the payer comes back there after a redirect.
      returnUrl: (chargeId) => `${config.BASE_URL}/3ds/${chargeId}/return`,
    });
  // Sandbox-Simulate: acquirer_error (adapters/simulated-acquirer.ts) reaches whichever acquirer is wired;
  // it never touches a production call (the wrapper checks livemode).
  const sandbox = withSimulatedAcquirerErrors(config.SANDBOX_ACQUIRER === "adyen" ? adyen() : simulator());
  const live =
    config.PRODUCTION_ACQUIRER === "adyen" ? adyen() : config.PRODUCTION_ACQUIRER === "simulator" ? sandbox : null;
  return { live, sandbox };
}

/**
 * The payout rail: per environment, Adyen's payout API where that environment's acquirer is `adyen`,
 * otherwise the simulated rail (no money leaves the server).
 */
export function payoutRailFor(config: Config): PayoutRail {
  const simulated = createSimulatorPayoutRail();
  if (!usesAdyen(config)) return simulated;
  const adyen = createAdyenPayoutRail(adyenConnector(config));
  const railOf = (livemode: boolean) =>
    (livemode ? config.PRODUCTION_ACQUIRER : config.SANDBOX_ACQUIRER) === "adyen" ? adyen : simulated;
  return {
    send: (request) => railOf(request.livemode).send(request),
    outcome: (request) => railOf(request.livemode).outcome(request),
    refuses: (livemode, destination) => railOf(livemode).refuses?.(livemode, destination) ?? null,
  };
}

/** What the start logs about Adyen where it is wired (no secret: the key and HMAC key stay out), or null. */
export function adyenInUse(config: Config) {
  if (!usesAdyen(config)) return null;
  return {
    production: config.PRODUCTION_ACQUIRER === "adyen",
    sandbox: config.SANDBOX_ACQUIRER === "adyen",
    environment: config.ADYEN_ENVIRONMENT,
    merchant_account: config.ADYEN_MERCHANT_ACCOUNT,
    api_key: config.ADYEN_API_KEY_FILE ? `from ${config.ADYEN_API_KEY_FILE}` : "set",
    payout_reviewer_key: config.ADYEN_PAYOUT_REVIEWER_API_KEY_FILE
      ? `from ${config.ADYEN_PAYOUT_REVIEWER_API_KEY_FILE}`
      : config.ADYEN_PAYOUT_REVIEWER_API_KEY
        ? "set"
        : "same as ADYEN_API_KEY",
    checkout_url: adyenSettings(config).checkoutUrl,
  };
}

/**
 * The acquirer settings a server cannot start with, as a StartupError naming the setting: an Adyen
 * credential missing or unreadable (ADYEN_API_KEY_FILE). The configuration schema refuses most of these
 * first; this also covers a Config built without it and the key file, which only exists at start.
 */
export function acquirerProblem(config: Config): StartupError | null {
  if (!usesAdyen(config)) return null;
  try {
    adyenSettings(config);
    return null;
  } catch (err) {
    if (err instanceof StartupError) return err;
    throw err;
  }
}
