// What the domain reports as it works, for the operators' metrics (docs/operating.md "Metrics"). The
// domain imports no metrics library: the server wires an implementation (adapters/metrics.ts) and
// tests pass their own. Each report is made once per committed change (after its transaction
// commits, never for a run that rolled back or was retried), and must be cheap and never throw.

/** How a recorded webhook delivery attempt ended (the attempt log's status_code or error). */
export type AttemptOutcome =
  | "succeeded"
  | "http_error"
  | "timeout"
  | "dns_error"
  | "connection_error"
  | "tls_error"
  | "address_refused";

export interface DomainObserver {
  /** A committed change left a charge in `status`: created in it, or moved to it. */
  chargeStatus(status: string, livemode: boolean): void;
  /**
   * A webhook delivery attempt was made and its outcome recorded. `lagSeconds`: for the first automatic
   * attempt of a delivery, the time from its event's creation to the attempt; otherwise null.
   */
  webhookAttempt(attempt: { outcome: AttemptOutcome; livemode: boolean; lagSeconds: number | null }): void;
  /**
   * A delivery ended `failed`: its retries ran out, its endpoint answered 410, a manual attempt failed,
   * or its endpoint was disabled or deleted before it could be attempted.
   */
  webhookDeliveryFailed(livemode: boolean): void;
  /** An endpoint was disabled automatically: it answered 410 Gone, or failed for the whole failure window. */
  webhookEndpointDisabled(reason: "gone" | "failing", livemode: boolean): void;
}

/** The observer of a domain nobody watches. */
export const unobserved: DomainObserver = {
  chargeStatus: () => {},
  webhookAttempt: () => {},
  webhookDeliveryFailed: () => {},
  webhookEndpointDisabled: () => {},
};
