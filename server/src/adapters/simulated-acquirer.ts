import { AsyncLocalStorage } from "node:async_hooks";
import type { Processor } from "../domain/charges/processor.ts";

// The `acquirer_error` mode of the Sandbox-Simulate header (spec/common/sandbox-simulate.tsp): the
// request's front step (http/sandbox-simulate.ts) runs the rest of the request inside
// `simulatingAcquirerError`, and the acquirer, wrapped by `withSimulatedAcquirerErrors` where the server
// wires it (server.ts domainFor), answers a sandbox card authorization made inside it as an acquirer
// that erred. The Processor port is unchanged: the request's wish travels in its async context, not in
// the port's arguments, and whichever acquirer is wired gets the same behaviour.

const acquirerError = new AsyncLocalStorage<true>();

/** Runs `run` (the rest of one sandbox request) so that the acquirer it reaches errs. */
export function simulatingAcquirerError<T>(run: () => T): T {
  return acquirerError.run(true, run);
}

/** What a card authorization made under `acquirer_error` answers: the contract's `processing_error`. */
export const SIMULATED_ACQUIRER_ERROR = {
  approved: false,
  failureCode: "processing_error",
  failureMessage: "The acquirer returned an error (simulated by the Sandbox-Simulate header).",
} as const;

/**
 * `processor`, except that a sandbox card authorization made inside `simulatingAcquirerError` fails with
 * `processing_error` without reaching it. A production authorization never does: the front step refuses
 * the header with a production key, and the `livemode` check here holds even if it did not.
 */
export function withSimulatedAcquirerErrors(processor: Processor): Processor {
  const authorizeCard: Processor["authorizeCard"] = async (request) => {
    if (!request.livemode && acquirerError.getStore() === true) return { ...SIMULATED_ACQUIRER_ERROR };
    return processor.authorizeCard(request);
  };
  // Every other method is the wrapped acquirer's own (through the prototype, so a class instance works too).
  // cast: Object.create types what it makes as any; an object whose prototype is a Processor has its methods.
  return Object.assign(Object.create(processor) as Processor, { authorizeCard });
}
