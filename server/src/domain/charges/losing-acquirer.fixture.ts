import { createSimulatorProcessor, type SimulatorProcessor } from "../../adapters/processor-simulator.ts";
import type { Processor } from "./processor.ts";

// For tests of crash safety toward the acquirer (intents.test.ts, in-doubt.test.ts): the simulator, whose
// calls named in `losing` are applied and then end without their answer (a crash, a time-out, a 5xx).

export type LosableCall = "authorizeCard" | "capture" | "void" | "refund" | "reverse" | "startLocalPayment";

/** The simulator, counting; a call named in `losing` applies, then throws `failure(call)` instead of answering. */
export function losingAcquirer(failure: (call: LosableCall) => Error) {
  const sim = createSimulatorProcessor({ count: true });
  const losing = new Set<LosableCall>();
  const lose =
    <K extends LosableCall>(name: K) =>
    async (request: Parameters<Processor[K]>[0]) => {
      // Cast: each method takes its own request type; `request` is that type for `name`.
      const answer = await (sim[name] as (r: typeof request) => Promise<unknown>)(request);
      if (losing.has(name)) throw failure(name);
      return answer;
    };
  const processor: SimulatorProcessor = {
    ...sim,
    // Casts: `lose` returns the method with its request typed, its answer widened to unknown.
    authorizeCard: lose("authorizeCard") as Processor["authorizeCard"],
    // cast: as for authorizeCard.
    capture: lose("capture") as Processor["capture"],
    // cast: as for authorizeCard.
    void: lose("void") as Processor["void"],
    // cast: as for authorizeCard.
    refund: lose("refund") as Processor["refund"],
    // cast: as for authorizeCard.
    reverse: lose("reverse") as Processor["reverse"],
    // cast: as for authorizeCard.
    startLocalPayment: lose("startLocalPayment") as Processor["startLocalPayment"],
  };
  return { processor, sim, losing };
}
