import type { Now } from "../kernel/caller.ts";
import { iso } from "../kernel/time.ts";
import type { VaultKeys } from "../vault/crypto.ts";
import { createWebhookDeliveries } from "./deliveries.ts";
import { createDispatcher, type DispatcherLog, type WebhookSettings } from "./dispatcher.ts";
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
  log?: DispatcherLog | undefined;
}

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
  });
  return {
    endpoints,
    deliveries,
    dispatcher,
    sender: deps.sender,
    options,
    /** Deletes finished deliveries (the attempt log) older than the retention period. */
    sweepLog: () =>
      outbox.store.deleteMany("webhook_deliveries", {
        status: { $in: ["succeeded", "failed"] },
        created_at: { $lt: iso(new Date(deps.now().getTime() - options.logRetentionDays * 86_400_000)) },
      }),
  };
}

export type Webhooks = ReturnType<typeof createWebhooks>;
