import type { Clock } from "../kernel/clock.ts";
import { idFloor, idNow } from "../kernel/ids.ts";
import type { DomainLog } from "../kernel/log.ts";
import type { DomainObserver } from "../kernel/observer.ts";
import { iso } from "../kernel/time.ts";
import type { VaultKeys } from "../vault/crypto.ts";
import type { WebhookDeliveries } from "./deliveries.ts";
import { createWebhookDeliveries } from "./deliveries.ts";
import { createDispatcher, type Dispatcher, type WebhookSettings } from "./dispatcher.ts";
import type { WebhookEndpoints } from "./endpoints.ts";
import { createWebhookEndpoints } from "./endpoints.ts";
import type { Outbox } from "./outbox.ts";
import type { WebhookSender } from "./sender.ts";
import { addressPolicy, type Resolver } from "./ssrf.ts";

// Webhook endpoints, deliveries and the dispatcher, wired to one store (see ./dispatcher.ts for how
// delivery works and ./ssrf.ts for where it may go).

/** The webhook settings (WEBHOOK_* in the configuration schema, config.ts: their one home). */
export interface WebhookOptions extends WebhookSettings {
  sandboxAllowLoopback: boolean;
  sandboxAllowPrivate: boolean;
  /** Finished deliveries older than this are deleted by the housekeeping job. */
  logRetentionDays: number;
}

export interface WebhookDeps {
  outbox: Outbox;
  clock: Clock;
  vaultKeys: VaultKeys;
  options: WebhookOptions;
  sender: WebhookSender;
  resolve: Resolver;
  random?: (() => number) | undefined;
  log?: DomainLog | undefined;
  observer?: DomainObserver | undefined;
}

/** The outbox's depth counts at most this many of each (a bound on what one look reads). */
export const OUTBOX_DEPTH_LIMIT = 1000;

export function createWebhooks(deps: WebhookDeps): Webhooks {
  const { options, outbox } = deps;
  const sandbox = { allowLoopback: options.sandboxAllowLoopback, allowPrivate: options.sandboxAllowPrivate };
  const policies = { live: addressPolicy(true, sandbox), sandbox: addressPolicy(false, sandbox) };
  const policyFor = (livemode: boolean) => (livemode ? policies.live : policies.sandbox);
  const endpoints = createWebhookEndpoints({
    store: outbox.store,
    clock: deps.clock,
    vaultKeys: deps.vaultKeys,
    resolve: deps.resolve,
    policyFor,
  });
  const deliveries = createWebhookDeliveries({ store: outbox.store, clock: deps.clock, endpoints });
  const dispatcher = createDispatcher({
    store: outbox.unwatched,
    clock: deps.clock,
    vaultKeys: deps.vaultKeys,
    sender: deps.sender,
    settings: options,
    policyFor,
    signal: outbox,
    random: deps.random,
    log: deps.log,
    ...(deps.observer ? { observer: deps.observer } : {}),
  });
  return {
    endpoints,
    deliveries,
    dispatcher,
    sender: deps.sender,
    options,
    /**
     * The outbox's backlog, both environments together: events not yet fanned out into deliveries, and
     * deliveries due for an attempt now on their environment's clock (leases that ran out included).
     * Each is counted up to OUTBOX_DEPTH_LIMIT, which then means "that many or more".
     */
    async depth(): Promise<{ eventsPending: number; deliveriesDue: number }> {
      const dueIn = (livemode: boolean) =>
        outbox.unwatched.findAll(
          "webhook_deliveries",
          { livemode, status: "pending", next_attempt_at: { $lte: iso(deps.clock.now(livemode)) } },
          OUTBOX_DEPTH_LIMIT,
          { by: "next_attempt_at", direction: "asc" },
        );
      const [events, live, sandbox] = await Promise.all([
        outbox.unwatched.findAll("events", { delivery_pending: true }, OUTBOX_DEPTH_LIMIT, {
          by: "created_at",
          direction: "asc",
        }),
        dueIn(true),
        dueIn(false),
      ]);
      return {
        eventsPending: events.length,
        deliveriesDue: Math.min(OUTBOX_DEPTH_LIMIT, live.length + sandbox.length),
      };
    },
    /**
     * Deletes finished deliveries (the attempt log) older than the retention period on their environment's
     * clock (or, after a sandbox clock reset, on the server's).
     */
    sweepLog: async () => {
      let deleted = 0;
      for (const livemode of [true, false]) {
        deleted += await outbox.store.deleteMany("webhook_deliveries", {
          livemode,
          status: { $in: ["succeeded", "failed"] },
          created_at: {
            $lt: iso(new Date(deps.clock.now(livemode).getTime() - options.logRetentionDays * 86_400_000)),
          },
        });
        // After a sandbox clock reset, deliveries made on the advanced clock carry times after the
        // sandbox's now: their age on the server's clock (in their id) bounds how long they are kept.
        if (deps.clock.resets(livemode).length > 0) {
          deleted += await outbox.store.deleteMany("webhook_deliveries", {
            livemode,
            status: { $in: ["succeeded", "failed"] },
            id: { $lt: idFloor("whd", idNow() - options.logRetentionDays * 86_400_000) },
          });
        }
      }
      return deleted;
    },
  };
}

/** The webhooks area's service: endpoints, deliveries, the dispatcher and the outbox's depth. */
export interface Webhooks {
  endpoints: WebhookEndpoints;
  deliveries: WebhookDeliveries;
  dispatcher: Dispatcher;

  sender: WebhookSender;
  options: WebhookOptions;
  /**
   * The outbox's backlog, both environments together: events not yet fanned out into deliveries, and
   * deliveries due for an attempt now on their environment's clock (leases that ran out included).
   * Each is counted up to OUTBOX_DEPTH_LIMIT, which then means "that many or more".
   */
  depth(): Promise<{
    eventsPending: number;
    deliveriesDue: number;
  }>;
  /**
   * Deletes finished deliveries (the attempt log) older than the retention period on their environment's
   * clock (or, after a sandbox clock reset, on the server's).
   */
  sweepLog: () => Promise<number>;
}
