import type { Caller } from "../kernel/caller.ts";
import type { Clock } from "../kernel/clock.ts";
import { inEnvironment } from "../kernel/environment.ts";
import { DomainError } from "../kernel/errors.ts";
import { recordEvent } from "../kernel/events.ts";
import type { DomainLog } from "../kernel/log.ts";
import type { MoneyRules } from "../kernel/money.ts";
import type { DomainObserver } from "../kernel/observer.ts";
import { transition as machineTransition } from "../kernel/state-machine.ts";
import { iso } from "../kernel/time.ts";
import { type FeeSchedule, feeFor } from "../ledger/fees.ts";
import { ensureBalance, postCapture } from "../ledger/ledger.ts";
import type { Merchants } from "../merchants/merchants.ts";
import type { SealedSecret } from "../vault/crypto.ts";
import type { Tokens } from "../vault/tokens.ts";
import type { FraudScreen } from "./fraud-screen.ts";
import { type AcquirerIntents, acquirerIntents } from "./intents.ts";
import type { Processor } from "./processor.ts";
import type { ChargeDoc, ChargeStatus, ChargeStore, ChargeTx } from "./records.ts";
import { CHARGE_MACHINE, type ChargeAction, eventFields, refusal } from "./state.ts";
import type { ChallengeLinks } from "./three-d-secure.ts";

// What every charge operation works with (create.ts, capture.ts, refunds.ts, reviews.ts,
// local-payments.ts): its dependencies, and the steps they share.
//
// Order of work for every change: checks → the intent (intents.ts) → the processor (an outside call,
// never inside a store transaction, which may be retried; sent with the intent's idempotency key) → one
// transaction that writes the state change, its ledger entries and balance changes, its events (the
// outbox) and the intent's resolution, conditional on the state it started from.

export interface ChargesDeps {
  store: ChargeStore;
  clock: Clock;
  merchants: Merchants;
  tokens: Tokens;
  /**
   * The acquirer of each environment (PRODUCTION_ACQUIRER, SANDBOX_ACQUIRER). Production's is null while
   * PRODUCTION_ACQUIRER is unset: its money operations are then refused (processorFor), never simulated.
   */
  processors: { live: Processor | null; sandbox: Processor };
  fraud: FraudScreen;
  money: MoneyRules;
  /** Captures wait this long in `pending` before they are `available`, in production and in the sandbox. */
  settlementDelaySeconds: number;
  sandboxSettlementDelaySeconds: number;
  /**
   * Runs inside the transaction of every transition (and review closing) of a charge, after the charge
   * is written: a payment link follows its charges' outcomes this way (domain/payment-links/usage.ts).
   */
  onTransition: (tx: ChargeTx, from: ChargeStatus, charge: ChargeDoc) => Promise<void>;
  /**
   * Runs inside every capture's transaction, after its money is posted (applyCapture): the sandbox's
   * dispute test cards schedule their dispute this way (domain/disputes).
   */
  onCapture?: (tx: ChargeTx, captured: ChargeDoc) => Promise<void>;
  /** Told, once the change commits, the status each created or changed charge is left in (metrics). */
  observer: DomainObserver;
  /**
   * The fee schedule a merchant's new charges pay (its override, or FEE_SCHEDULE: ledger/fee-schedules.ts);
   * a charge takes its rate when it is made.
   */
  fees: (merchantId: string) => Promise<FeeSchedule>;
  /** How long a charge waits in `requires_action` for the payer's 3-D Secure answer before it expires. */
  threeDSecureExpirySeconds: number;
  /** The sandbox issuer's challenge page links (three-d-secure.ts). */
  challengeLinks: ChallengeLinks;
  /** How long an acquirer intent's request is presumed alive before recovery takes it over (intents.ts). */
  intentLockSeconds: number;
  /** Where the recovery job and a refund's call in doubt report what no caller hears of. */
  log: DomainLog;
  /**
   * Seals what an intent must keep of a payer to send its call again (a SEPA debit's account, create.ts),
   * under the vault's master key (vault/crypto.ts sealSecret), and opens it for the recovery job.
   */
  sealing: {
    seal(text: string, context: string): SealedSecret;
    open(sealed: SealedSecret, context: string): string;
  };
}

export function chargeContext(deps: ChargesDeps): ChargeContext {
  const { store, clock } = deps;

  async function load(livemode: boolean, id: string, param = "id"): Promise<ChargeDoc> {
    return inEnvironment(await store.get("charges", id), livemode, "charge", id, param);
  }

  /** The charge `id` of the environment, or null (an acquirer's report may name one not committed yet). */
  async function find(livemode: boolean, id: string): Promise<ChargeDoc | null> {
    const charge = await store.get("charges", id);
    return charge && charge.livemode === livemode ? charge : null;
  }

  /**
   * Moves a charge through CHARGE_MACHINE (kernel/state-machine.ts), conditionally on the status it starts
   * from (a concurrent change makes it a 409), then lets its link follow (deps.onTransition).
   */
  async function transition(
    tx: ChargeTx,
    charge: ChargeDoc,
    to: ChargeStatus,
    set: Partial<Omit<ChargeDoc, "status">>,
    action: ChargeAction,
  ): Promise<ChargeDoc> {
    const updated = await machineTransition(tx, "charges", "charge", CHARGE_MACHINE, charge, to, {
      set,
      at: iso(clock.now(charge.livemode)),
      refuse: (current) => refusal(current, action),
    });
    await onTransition(tx, charge.status, updated);
    return updated;
  }

  /** Reports, once `tx` commits, the status `charge` is left in: every way a charge gets a status ends here. */
  function reached(tx: ChargeTx, charge: ChargeDoc): void {
    tx.afterCommit(() => deps.observer.chargeStatus(charge.status, charge.livemode));
  }

  /** deps.onTransition, after noting the charge's new status (a review closed without one is not a change). */
  async function onTransition(tx: ChargeTx, from: ChargeStatus, charge: ChargeDoc): Promise<void> {
    if (charge.status !== from) reached(tx, charge);
    await deps.onTransition(tx, from, charge);
  }

  /**
   * Makes the merchant's balance in the charge's currency exist before a capture's transaction credits
   * it (see ledger.ts ensureBalance: outside the money transaction, on purpose).
   */
  const prepareCapture = (charge: ChargeDoc) =>
    ensureBalance(store, charge.livemode, charge.merchant_id, charge.currency, clock);

  /**
   * A capture's effects, inside its transaction, after the charge is written `captured`: the merchant is
   * credited (`pending` until settlement, or `available` at once when its environment's delay is 0,
   * the sandbox's default) and
   * `payment.captured` is recorded. Every way a charge is captured ends here: at creation, capture,
   * a local payment completed, a review approved.
   */
  async function applyCapture(tx: ChargeTx, captured: ChargeDoc, amount: number): Promise<void> {
    const delay = captured.livemode ? deps.settlementDelaySeconds : deps.sandboxSettlementDelaySeconds;
    const availableOn = delay === 0 ? null : iso(new Date(clock.now(captured.livemode).getTime() + delay * 1000));
    await postCapture(tx, clock, {
      livemode: captured.livemode,
      merchantId: captured.merchant_id,
      currency: captured.currency,
      chargeId: captured.id,
      amount,
      fee: feeFor(captured.fee_rate, amount),
      availableOn,
    });
    await recordEvent(tx, clock, captured.livemode, "payment.captured", {
      ...eventFields(captured),
      amount_captured: amount,
    });
    await deps.onCapture?.(tx, captured);
  }

  /**
   * Erases the card token a hosted page made for this charge alone once 3-D Secure no longer needs it
   * (answered or expired): the merchant keeps no reusable card (domain/payment-links/pay.ts).
   */
  async function eraseSingleUseToken(charge: ChargeDoc): Promise<void> {
    const token = charge.payment_method.token;
    if (!charge.three_d_secure?.erase_token || !token) return;
    const system: Caller = {
      keyId: `charge:${charge.id}`,
      livemode: charge.livemode,
      scopes: [],
      keyPrefix: "charge",
      requestId: "3ds",
    };
    await deps.tokens.delete(system, token);
  }

  /**
   * The environment's acquirer; a 503 `acquirer_not_configured` naming the setting when production has
   * none. Every money operation asks for it first, before it stores anything.
   */
  function processorFor(livemode: boolean): Processor {
    if (!livemode) return deps.processors.sandbox;
    if (deps.processors.live) return deps.processors.live;
    throw new DomainError(
      "acquirer_not_configured",
      "Production payments are off: this server has no acquirer configured. Its operator sets PRODUCTION_ACQUIRER (docs/operating.md); nothing was charged or stored.",
    );
  }

  const intents = acquirerIntents({ store, clock, lockSeconds: deps.intentLockSeconds });

  return {
    ...deps,
    processorFor,
    intents,
    onTransition,
    load,
    find,
    transition,
    reached,
    prepareCapture,
    applyCapture,
    eraseSingleUseToken,
  };
}

/** What every charge use case works with: the area's dependencies and the steps they share (this file). */
export interface ChargeContext extends ChargesDeps {
  /** The environment's acquirer, or a 503 `acquirer_not_configured` when production has none. */
  processorFor(livemode: boolean): Processor;
  intents: AcquirerIntents;
  onTransition(tx: ChargeTx, from: ChargeStatus, charge: ChargeDoc): Promise<void>;
  load(livemode: boolean, id: string, param?: string): Promise<ChargeDoc>;
  /** The charge `id` of the environment, or null. */
  find(livemode: boolean, id: string): Promise<ChargeDoc | null>;
  transition(
    tx: ChargeTx,
    charge: ChargeDoc,
    to: ChargeStatus,
    set: Partial<Omit<ChargeDoc, "status">>,
    action: ChargeAction,
  ): Promise<ChargeDoc>;
  reached(tx: ChargeTx, charge: ChargeDoc): void;
  prepareCapture(charge: ChargeDoc): Promise<void>;
  applyCapture(tx: ChargeTx, captured: ChargeDoc, amount: number): Promise<void>;
  eraseSingleUseToken(charge: ChargeDoc): Promise<void>;
}
