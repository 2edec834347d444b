import { invalid } from "../kernel/errors.ts";
import type { Schemas } from "../kernel/operations.ts";
import type { WebhookEndpointDoc } from "./records.ts";
import type { DeliveryResult } from "./sender.ts";

// Webhook chaos (the contract's WebhookChaos, spec/resources/webhook-chaos.tsp): sandbox settings of an
// endpoint that make its deliveries misbehave the ways at-least-once delivery allows, so a receiver can
// be rehearsed against them (docs/testing-your-integration.md "Webhook chaos"). The dispatcher applies
// them: fan-out (./fan-out.ts) delays and reorders first attempts, an attempt (./delivery-attempt.ts)
// fails the first ones unsent and duplicates an acknowledged one. Every rule of the settings is here.

export type WebhookChaos = Schemas["WebhookChaos"];
type ChaosInput = Schemas["WebhookChaosSettings"] | null | undefined;

/**
 * The settings to store from a create or update request's `chaos` (`undefined`: not sent, keep what is
 * stored): absent fields are the contract's defaults (the validator fills none inside a nullable
 * object), settings that change nothing are stored as `null`, and a production endpoint refuses any.
 */
export function chaosSettings(livemode: boolean, input: ChaosInput): WebhookChaos | null | undefined {
  if (input === undefined) return undefined;
  if (input === null) return null;
  if (livemode) {
    throw invalid(
      "chaos",
      "chaos settings are for sandbox endpoints only: production deliveries never misbehave on purpose (send `null`, or leave `chaos` out)",
    );
  }
  const chaos: WebhookChaos = {
    duplicate: input.duplicate ?? false,
    delay_seconds: input.delay_seconds ?? 0,
    reorder: input.reorder ?? false,
    fail_first_attempts: input.fail_first_attempts ?? 0,
  };
  const inert = !chaos.duplicate && !chaos.reorder && chaos.delay_seconds === 0 && chaos.fail_first_attempts === 0;
  return inert ? null : chaos;
}

/** The chaos an endpoint's deliveries follow: none in production, whatever is stored. */
export function chaosOf(endpoint: WebhookEndpointDoc): WebhookChaos | null {
  return endpoint.livemode ? null : (endpoint.chaos ?? null);
}

/**
 * When a delivery's first attempt is due, for an endpoint with `delay_seconds` or `reorder`, or null when
 * it goes at once (and fan-out may start it itself). `position` counts this endpoint's deliveries in the
 * fan-out batch, oldest event first: under `reorder` each is due a millisecond before the one before it,
 * so the dispatcher, which takes due deliveries soonest first, sends them newest first.
 */
export function firstAttemptDue(chaos: WebhookChaos | null, at: Date, position: number): Date | null {
  if (!chaos || (chaos.delay_seconds === 0 && !chaos.reorder)) return null;
  return new Date(at.getTime() + chaos.delay_seconds * 1000 - (chaos.reorder ? position : 0));
}

/** The outcome of attempt `number` when `fail_first_attempts` fails it unsent, or null when it is sent. */
export function failedUnsent(chaos: WebhookChaos | null, number: number): DeliveryResult | null {
  if (!chaos || number > chaos.fail_first_attempts) return null;
  return {
    kind: "error",
    error: "connection_error",
    message: `Not sent: the endpoint's chaos setting fail_first_attempts (${chaos.fail_first_attempts}) fails attempt ${number} (sandbox).`,
    latencyMs: 0,
  };
}

/** Whether an attempt's outcome is sent once more (`duplicate`): only an acknowledged one. */
export function sendsDuplicate(chaos: WebhookChaos | null, result: DeliveryResult): boolean {
  return chaos?.duplicate === true && result.kind === "response" && result.status >= 200 && result.status < 300;
}
