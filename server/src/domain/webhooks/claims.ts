import type { Clock } from "../kernel/clock.ts";
import type { DomainLog } from "../kernel/log.ts";
import { iso } from "../kernel/time.ts";
import type { Launch } from "./delivery-attempt.ts";
import { FANOUT_BATCH, fanOut } from "./fan-out.ts";
import type { WebhookDeliveryDoc, WebhookStore } from "./records.ts";

// The dispatcher's delivery claims (dispatcher.ts, steps 1 and 2): which deliveries this instance takes
// and runs, within its concurrency (WEBHOOK_CONCURRENCY in all, and per endpoint). A claim is a
// conditional update only one instance can win; the attempts it starts are counted here until they end.

export interface DeliveryClaims {
  /** Fans out every pending event, batch by batch, starting the deliveries claimed on the way; returns how many events. */
  fanOutAll(): Promise<number>;
  /** Claims one environment's due deliveries (on its clock) as far as there is room, and starts them. */
  claimDue(livemode: boolean): Promise<number>;
  /** Waits for every attempt running now; false when none was. */
  settle(): Promise<boolean>;
  /** Attempts running in this instance. */
  readonly inFlight: number;
}

export function deliveryClaims(deps: {
  store: WebhookStore;
  clock: Clock;
  settings: { concurrency: number; endpointConcurrency: number };
  /** A claim's lease: the attempt's timeout plus a margin. */
  leaseMs: number;
  /** This instance's claim tokens (`<instance>:<n>`). */
  newClaim: () => string;
  attempt: (launch: Launch) => Promise<void>;
  log: DomainLog;
  /** Whether the dispatcher is stopping: then nothing more is claimed. */
  stopping: () => boolean;
  /** Told when an attempt ends (a slot is free: look for work). */
  onSettled: () => void;
}): DeliveryClaims {
  const { store, clock, settings } = deps;
  /** Attempts running in this instance, by delivery id, and how many per endpoint. */
  const inFlight = new Map<string, Promise<void>>();
  const perEndpoint = new Map<string, number>();
  const freeSlots = () => settings.concurrency - inFlight.size;

  function launch(l: Launch): void {
    const { delivery } = l;
    perEndpoint.set(delivery.endpoint_id, (perEndpoint.get(delivery.endpoint_id) ?? 0) + 1);
    const run = deps
      .attempt(l)
      .catch((err: unknown) => deps.log.error({ err, delivery: delivery.id }, "webhook attempt failed"))
      .finally(() => {
        inFlight.delete(delivery.id);
        const left = (perEndpoint.get(delivery.endpoint_id) ?? 1) - 1;
        if (left > 0) perEndpoint.set(delivery.endpoint_id, left);
        else perEndpoint.delete(delivery.endpoint_id);
        // A slot is free, and the attempt may have recorded an event (webhook_endpoint.disabled) that
        // the dispatcher's own unwatched writes did not announce: look for work now.
        deps.onSettled();
      });
    inFlight.set(delivery.id, run);
  }

  /** Fans out one batch of pending events, and starts the deliveries it claimed on the way. */
  async function fanOutBatch(): Promise<number> {
    const { events, launches } = await fanOut(
      {
        store,
        clock,
        endpointConcurrency: settings.endpointConcurrency,
        leaseMs: deps.leaseMs,
        newClaim: deps.newClaim,
      },
      () => ({ free: deps.stopping() ? 0 : freeSlots(), load: new Map(perEndpoint) }),
    );
    for (const l of launches) launch(l);
    return events;
  }

  /** Which of the due deliveries fit: not running here already, and within each endpoint's concurrency. */
  function pick(due: WebhookDeliveryDoc[], free: number): WebhookDeliveryDoc[] {
    const load = new Map(perEndpoint);
    const picked: WebhookDeliveryDoc[] = [];
    for (const d of due) {
      if (picked.length >= free) break;
      if (inFlight.has(d.id) || (load.get(d.endpoint_id) ?? 0) >= settings.endpointConcurrency) continue;
      picked.push(d);
      load.set(d.endpoint_id, (load.get(d.endpoint_id) ?? 0) + 1);
    }
    return picked;
  }

  async function claimDue(livemode: boolean): Promise<number> {
    const free = freeSlots();
    if (free <= 0 || deps.stopping()) return 0;
    const at = clock.now(livemode);
    // Soonest due first, so a backlog is worked off in order and no delivery waits behind newer ones.
    const due = await store.findAll(
      "webhook_deliveries",
      { livemode, status: "pending", next_attempt_at: { $lte: iso(at) } },
      Math.min(free * 2, 200),
      { by: "next_attempt_at", direction: "asc" },
    );
    const picked = pick(due, free);
    if (picked.length === 0) return 0;
    const leaseEnd = iso(new Date(at.getTime() + deps.leaseMs));
    let claimed: WebhookDeliveryDoc[] = [];
    await store.transaction(async (tx) => {
      claimed = [];
      for (const d of picked) {
        const won = await tx.update(
          "webhook_deliveries",
          d.id,
          { set: { next_attempt_at: leaseEnd, claim: deps.newClaim() } },
          // Exactly the state read: if another instance claimed it meanwhile, this changes nothing.
          { status: "pending", next_attempt_at: d.next_attempt_at, claim: d.claim },
        );
        if (won) claimed.push(won);
      }
    });
    for (const delivery of claimed) launch({ delivery });
    return claimed.length;
  }

  return {
    async fanOutAll() {
      let work = 0;
      for (;;) {
        const n = await fanOutBatch();
        work += n;
        if (n < FANOUT_BATCH) return work;
      }
    },
    claimDue,
    async settle() {
      if (inFlight.size === 0) return false;
      await Promise.all(inFlight.values());
      return true;
    },
    get inFlight() {
      return inFlight.size;
    },
  };
}
