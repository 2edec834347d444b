import type { Now } from "../kernel/caller.ts";
import { iso } from "../kernel/time.ts";
import type { AppStore } from "../records.ts";
import type { VaultKeys } from "../vault/crypto.ts";
import { createDispatcher, type DispatcherLog, type WebhookSettings } from "./dispatcher.ts";
import { createWebhookEndpoints } from "./endpoints.ts";
import type { OutboxSignal } from "./outbox.ts";
import { DEFAULT_LIVE_SCHEDULE, DEFAULT_SANDBOX_SCHEDULE, parseSchedule } from "./schedule.ts";
import type { WebhookSender } from "./sender.ts";
import { addressPolicy, type Resolver } from "./ssrf.ts";

// Webhook endpoints, deliveries and the dispatcher, wired to one store (see ./dispatcher.ts for how
// delivery works and ./ssrf.ts for where it may go).

export interface WebhookOptions extends WebhookSettings {
  sandboxAllowLoopback: boolean;
  sandboxAllowPrivate: boolean;
  /** Finished deliveries older than this are deleted by the housekeeping job. */
  logRetentionDays: number;
}

export const DEFAULT_WEBHOOK_OPTIONS: WebhookOptions = {
  timeoutMs: 10_000,
  liveSchedule: parseSchedule(DEFAULT_LIVE_SCHEDULE),
  sandboxSchedule: parseSchedule(DEFAULT_SANDBOX_SCHEDULE),
  disableAfterMs: 5 * 86_400_000,
  concurrency: 50,
  endpointConcurrency: 10,
  pollIntervalMs: 1_000,
  sandboxAllowLoopback: true,
  sandboxAllowPrivate: false,
  logRetentionDays: 30,
};

/** A sender that sends nothing: the default where no HTTP sender is wired (domain unit tests). */
export const offlineSender: WebhookSender = {
  send: async () => ({
    kind: "error",
    error: "connection_error",
    message: "no webhook sender is configured",
    latencyMs: 0,
  }),
};

/** A resolver that resolves nothing: the default where none is wired, so no test ever asks a DNS server. */
export const offlineResolver: Resolver = async (hostname) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
};

export interface WebhookDeps {
  /** The plain store, for the dispatcher. */
  store: AppStore;
  /** The store the use cases write through (watched by `signal`). */
  watched: AppStore;
  signal: OutboxSignal;
  now: Now;
  vaultKeys: VaultKeys;
  options?: Partial<WebhookOptions> | undefined;
  sender?: WebhookSender | undefined;
  resolve?: Resolver | undefined;
  random?: (() => number) | undefined;
  log?: DispatcherLog | undefined;
}

export function createWebhooks(deps: WebhookDeps) {
  const options: WebhookOptions = { ...DEFAULT_WEBHOOK_OPTIONS, ...deps.options };
  const sandbox = { allowLoopback: options.sandboxAllowLoopback, allowPrivate: options.sandboxAllowPrivate };
  const policies = { live: addressPolicy(true, sandbox), sandbox: addressPolicy(false, sandbox) };
  const policyFor = (livemode: boolean) => (livemode ? policies.live : policies.sandbox);
  const sender = deps.sender ?? offlineSender;
  const endpoints = createWebhookEndpoints({
    store: deps.watched,
    now: deps.now,
    vaultKeys: deps.vaultKeys,
    resolve: deps.resolve ?? offlineResolver,
    policyFor,
  });
  const dispatcher = createDispatcher({
    store: deps.store,
    now: deps.now,
    vaultKeys: deps.vaultKeys,
    sender,
    settings: options,
    policyFor,
    signal: deps.signal,
    random: deps.random,
    log: deps.log,
  });
  return {
    endpoints,
    dispatcher,
    sender,
    options,
    /** Deletes finished deliveries (the attempt log) older than the retention period. */
    sweepLog: () =>
      deps.store.deleteMany("webhook_deliveries", {
        status: { $in: ["succeeded", "failed"] },
        created_at: { $lt: iso(new Date(deps.now().getTime() - options.logRetentionDays * 86_400_000)) },
      }),
  };
}

export type Webhooks = ReturnType<typeof createWebhooks>;
