import { createHttpProcessor } from "./adapters/processor-http.ts";
import { createSimulatorProcessor } from "./adapters/processor-simulator.ts";
import { withSimulatedAcquirerErrors } from "./adapters/simulated-acquirer.ts";
import type { Config } from "./config.ts";
import type { Processor } from "./domain/charges/processor.ts";
import { StartupError } from "./startup-error.ts";

/**
 * Each environment's acquirer, as PRODUCTION_ACQUIRER and SANDBOX_ACQUIRER say. Production has none while
 * PRODUCTION_ACQUIRER is unset (its money operations answer 503). `adyen` gives none here either:
 * startServer refuses it first (acquirerProblem), and the admin CLI, which uses this too, moves no money.
 */
export function processorsFor(config: Config): { live: Processor | null; sandbox: Processor } {
  const simulator = (): Processor =>
    config.TEST_ACQUIRER_URL ? createHttpProcessor(config.TEST_ACQUIRER_URL) : createSimulatorProcessor();
  // Sandbox-Simulate: acquirer_error (adapters/simulated-acquirer.ts) reaches whichever acquirer is wired;
  // it never touches a production call (the wrapper checks livemode).
  const sandbox = withSimulatedAcquirerErrors(simulator());
  return { live: config.PRODUCTION_ACQUIRER === "simulator" ? sandbox : null, sandbox };
}

/**
 * The acquirer settings a server cannot start with, as a StartupError: `adyen` until the Adyen connector
 * is wired in (never a simulated stand-in for it).
 */
export function acquirerProblem(config: Config): StartupError | null {
  const setting =
    config.PRODUCTION_ACQUIRER === "adyen"
      ? "PRODUCTION_ACQUIRER"
      : config.SANDBOX_ACQUIRER === "adyen"
        ? "SANDBOX_ACQUIRER"
        : null;
  if (!setting) return null;
  return new StartupError(
    setting,
    "adyen: the Adyen connector is not wired into this server yet, so it cannot take payments through Adyen; set simulator (no money moves) or, for production, leave PRODUCTION_ACQUIRER unset (production payments are then refused)",
  );
}
