import type { Now } from "../kernel/caller.ts";
import type { DomainLog } from "../kernel/log.ts";
import type { DomainObserver } from "../kernel/observer.ts";
import { iso } from "../kernel/time.ts";
import type { VaultKeys } from "../vault/crypto.ts";
import { createWebhookDeliveries } from "./deliveries.ts";
import { createDispatcher, type WebhookSettings } from "./dispatcher.ts";
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
  now: Now;
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

export function createWebhooks(deps: WebhookDeps) {
  const { options, outbox } = deps;
  const sandbox = { allowLoopback: options.sandboxAllowLoopback, allowPrivate: options.sandboxAllowPrivate };
  const policies = { live: addressPolicy(true, sandbox), sandbox: addressPolicy(false, sandbox) };
  const policyFor = (livemode: boolean) => (livemode ? policies.live : policies.sandbox);
  const endpoints = createWebhookEndpoints({
    store: outbox.store,
    now: deps.now,
    vaultKeys: deps.vaultKeys,
    resolve: deps.resolve,
    policyFor,
  });
  const deliveries = createWebhookDeliveries({ store: outbox.store, now: deps.now, endpoints });
  const dispatcher = createDispatcher({
    store: outbox.unwatched,
    now: deps.now,
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
     * deliveries due for an attempt now (leases that ran out included). Each is counted up to
     * OUTBOX_DEPTH_LIMIT, which then means "that many or more".
     */
    async depth(): Promise<{ eventsPending: number; deliveriesDue: number }> {
      const [events, due] = await Promise.all([
        outbox.unwatched.findAll("events", { delivery_pending: true }, OUTBOX_DEPTH_LIMIT, {
          by: "created_at",
          direction: "asc",
        }),
        outbox.unwatched.findAll(
          "webhook_deliveries",
          { status: "pending", next_attempt_at: { $lte: iso(deps.now()) } },
          OUTBOX_DEPTH_LIMIT,
          { by: "next_attempt_at", direction: "asc" },
        ),
      ]);
      return { eventsPending: events.length, deliveriesDue: due.length };
    },
    /** Deletes finished deliveries (the attempt log) older than the retention period. */
    sweepLog: () =>
      outbox.store.deleteMany("webhook_deliveries", {
        status: { $in: ["succeeded", "failed"] },
        created_at: { $lt: iso(new Date(deps.now().getTime() - options.logRetentionDays * 86_400_000)) },
      }),
  };
}

export type Webhooks = ReturnType<typeof createWebhooks>;
