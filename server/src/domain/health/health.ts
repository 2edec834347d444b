import type { StoreReadiness } from "../../store/port.ts";
import { DomainError } from "../kernel/errors.ts";

// The instance's health, for getLiveness and getReadiness (the `Health` operations of the contract,
// spec/resources/health.tsp). Liveness needs nothing from here: answering at all is the proof.

/** How long readiness waits for the store before answering 503 (the contract says two seconds). */
export const READINESS_TIMEOUT_MS = 2_000;

export function createHealth(store: StoreReadiness): Health {
  let draining = false;
  return {
    /**
     * Resolves when the instance can serve requests; throws `service_unavailable` while the store
     * cannot take writes (store/port.ts StoreReadiness: on MongoDB a majority-acknowledged write, so a
     * replica set that lost its majority is not ready) within READINESS_TIMEOUT_MS, and once the
     * instance is shutting down.
     */
    async ready(): Promise<void> {
      if (draining) throw new DomainError("service_unavailable", "This instance is shutting down.");
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), READINESS_TIMEOUT_MS);
      });
      try {
        const answer = await Promise.race([store.ready(READINESS_TIMEOUT_MS).then(() => "ok" as const), timeout]);
        if (answer === "timeout") {
          throw new DomainError(
            "service_unavailable",
            `The store did not answer within ${READINESS_TIMEOUT_MS / 1000} seconds.`,
          );
        }
      } catch (err) {
        if (err instanceof DomainError) throw err;
        // The driver's message may name hosts; the operator finds it in the log, the caller gets the fact.
        throw new DomainError("service_unavailable", "The store is not answering.", { cause: err });
      } finally {
        clearTimeout(timer);
      }
    },

    /** From now on readiness answers 503, so load balancers stop sending requests (graceful shutdown). */
    drain(): void {
      draining = true;
    },
  };
}

/** The instance's health (getLiveness, getReadiness). */
export interface Health {
  /**
   * Resolves when the instance can serve requests; throws `service_unavailable` while the store
   * cannot take writes (store/port.ts StoreReadiness: on MongoDB a majority-acknowledged write, so a
   * replica set that lost its majority is not ready) within READINESS_TIMEOUT_MS, and once the
   * instance is shutting down.
   */
  ready(): Promise<void>;
  /** From now on readiness answers 503, so load balancers stop sending requests (graceful shutdown). */
  drain(): void;
}
