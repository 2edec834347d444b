import { DuplicateKeyError } from "../../store/port.ts";
import type { Clock } from "../kernel/clock.ts";
import { DomainError } from "../kernel/errors.ts";
import type { DomainLog } from "../kernel/log.ts";
import { iso } from "../kernel/time.ts";
import type { SealedSecret } from "../vault/crypto.ts";
import { type AcquirerOperation, acquirerKey, type CardAuthorizationRequest, type LocalMethod } from "./processor.ts";
import type { AcquirerIntentDoc, ChargeStatus, ChargeStore, ChargeTx, IntentFinish } from "./records.ts";

// Crash safety toward the acquirer (docs/acquirer-port.md "Intents: crash safety toward the acquirer").
// An outside call cannot join a store transaction, so every call that moves money at the acquirer goes
// in three steps:
// 1. the intent is written (its id is the call's idempotency key, processor.ts acquirerKey);
// 2. the call is sent with that key;
// 3. the outcome commits with the intent marked resolved, in the one transaction of the change.
// A crash between 1 and 3 leaves the intent open: in doubt. It is resolved by sending the same call again
// under the same key (the acquirer answers as the first time and applies nothing more), either by a retry
// of the same request (a charge retried with the same Idempotency-Key resumes its intent), or by the
// recovery job once the intent's lock has run out (recoverDue, run by the jobs runner):
// - a capture, void or refund is completed: its outcome commits as the request would have committed it;
// - an authorization whose charge was never stored is reversed at the acquirer (released, or refunded if
//   captured in the same call): the caller never got an answer, so the charge does not exist for them,
//   and a caller without an Idempotency-Key will send a new charge, which must not find the card charged;
// - a local payment's start whose charge was never stored (create.ts abandonUnrecorded): a SEPA Direct
//   Debit is started again under its key and reversed (the acquirer would collect it with no payer action);
//   any other method is left to expire at the acquirer, since only its payer completes it and they were
//   never shown the code or voucher (resolved `abandoned`, without a call).
// The lock is IDEMPOTENCY_LOCK_SECONDS, the time no request is expected to outlast: every intent is
// resolved within that lock plus one jobs interval (JOBS_INTERVAL_SECONDS) of the crash, on its
// environment's clock (the sandbox clock's advance brings sandbox intents due at once).

// What a resolved intent is still needed for, and so how long it is kept (docs/operating.md "Storage per
// request"). An unresolved intent is never deleted: it is the only trace of a call that may have moved money.
// Once resolved, an intent is read again only by:
// - a late notification about a charge that was never stored (acquirer-outcomes.ts ourReversal): the
//   `reversed` intent is what says the reversal was ours;
// - the acquirer's AUTHORISATION for a card charge it took undecided (`pending`) or a challenge's return
//   (`requires_action`): the intent's `capture` says what the request asked (authorizeUndecided);
// - a retry, with the same Idempotency-Key, of a capture or void the recovery job completed (capture.ts
//   completedFor), and a second capture, void, review or 3-D Secure return racing the first: the intent's id
//   is the call's key, so while it stands a second request cannot send the call again (open() refuses it);
// - the crash suites and an operator, counting what the recovery job did (attempts > 1, `conflict`).
// None of these concerns the intent of a charge's creation whose first call (attempts 1) decided the charge
// (authorized, captured or declined) and committed with it: the charge id is new, so nothing else ever
// opens that intent again (a later capture, void or refund is keyed on its own operation, processor.ts
// acquirerKey), a retry with the same Idempotency-Key is answered from the key's stored answer (written in
// the same transaction), and a notification about it reads the charge. That intent, nearly every charge's
// only one (~600 bytes with its indexes, issue 36), is deleted in the charge's transaction instead of being
// marked resolved; every other resolved intent is kept for good (they are few: one per later capture, void,
// review or refund, and the crash cases). A local payment's start that committed its charge is deleted
// likewise, on any attempt: nothing above reads it (its charge is `pending`, and the acquirer's
// AUTHORISATION reads the charge), and it may hold a direct debit's sealed account.

/**
 * Whether an intent being resolved with `resolution`, in the transaction that records its charge in
 * `chargeStatus`, must be kept (the reasons above); false: it is deleted instead.
 */
export function keptOnceResolved(
  intent: Pick<AcquirerIntentDoc, "operation" | "finish" | "attempts">,
  resolution: AcquirerIntentDoc["resolution"],
  chargeStatus: ChargeStatus,
): boolean {
  if (resolution !== "committed") return true;
  // A local payment's start that committed its charge (pending), on any attempt: the charge is all that is
  // read of it again, and its sealed account (a direct debit's) is kept no longer than needed.
  if (intent.operation === "start_local" && intent.finish === "create") return false;
  const createdAndDecided =
    intent.operation === "authorize" &&
    intent.finish === "create" &&
    (chargeStatus === "authorized" || chargeStatus === "captured" || chargeStatus === "declined");
  return !(createdAndDecided && intent.attempts === 1);
}

export interface IntentDeps {
  store: ChargeStore;
  clock: Clock;
  /** How long an intent's request (or a recovery under way) is presumed alive: IDEMPOTENCY_LOCK_SECONDS. */
  lockSeconds: number;
}

/** What opening an intent needs; the rest starts empty. */
export interface IntentFields {
  livemode: boolean;
  chargeId: string;
  /** The object the call is keyed on: the charge, or for a refund the refund. */
  objectId: string;
  operation: AcquirerOperation;
  finish: IntentFinish;
  amount: number;
  currency: string;
  reference: string | null;
  refundId?: string | null;
  requestKey?: string | undefined;
  token?: string | null;
  capture?: boolean | null;
  /** For an acquirer-run 3-D Secure completion: the payer's `redirectResult` (AcquirerIntentDoc). */
  redirectResult?: string | undefined;
  /** For an authorization: the return address sent with it, sent again with every repeat (AcquirerIntentDoc). */
  returnUrl?: string | undefined;
  /** For a local payment's start: its method, and a direct debit's sealed account (AcquirerIntentDoc). */
  localMethod?: LocalMethod | undefined;
  payerAccount?: SealedSecret | undefined;
}

const conflict = () =>
  new DomainError("conflict", "The charge's call to the acquirer was settled by another request meanwhile; retry.");

/** The intent's fields absent unless given (request_key is indexed sparse: absent, not null). */
const optionalFields = (fields: IntentFields) => ({
  ...(fields.requestKey ? { request_key: fields.requestKey } : {}),
  ...(fields.redirectResult === undefined ? {} : { redirect_result: fields.redirectResult }),
  ...(fields.returnUrl === undefined ? {} : { return_url: fields.returnUrl }),
  ...(fields.localMethod === undefined ? {} : { local_method: fields.localMethod }),
  ...(fields.payerAccount === undefined ? {} : { payer_account: fields.payerAccount }),
});

/** A resolution's fields; a sealed payer account is removed with it (AcquirerIntentDoc `payer_account`). */
const resolvedFields = (intent: AcquirerIntentDoc, resolution: AcquirerIntentDoc["resolution"], at: string) => ({
  state: "resolved" as const,
  resolution,
  resolved_at: at,
  ...(intent.payer_account ? { payer_account: null } : {}),
});

/**
 * The authorization an intent sends, built from the intent and the card alone, so that every attempt (the
 * first, a client's retry with its Idempotency-Key, the challenge's return, the recovery job's repeat) is
 * the same request under the same key, as an acquirer that checks keys (Adyen) requires.
 */
export function authorizationOf(
  intent: AcquirerIntentDoc,
  card: { pan: string; expMonth: number; expYear: number },
  now: Date,
  returnUrl: string,
): CardAuthorizationRequest {
  return {
    idempotencyKey: intent.id,
    chargeId: intent.charge_id,
    ...card,
    amount: intent.amount,
    currency: intent.currency,
    capture: intent.capture === true,
    livemode: intent.livemode,
    now,
    // The first attempt's return address on a resumed intent: the same request, whatever BASE_URL says now.
    returnUrl: intent.return_url ?? returnUrl,
  };
}

/**
 * A repeat of an authorization or a refund under its key that the acquirer refused as a request
 * (processor.ts `requestRefused`): what the first call did is unknown, so the intent stays in doubt, never
 * taken as "nothing authorized" or "nothing refunded". Thrown: the recovery job logs it and tries again on
 * its next pass; the acquirer's notification settles it if the first call was taken.
 */
export function refusedRepeat(intent: AcquirerIntentDoc): Error {
  return new Error(
    `the acquirer refused the repeat of ${intent.operation} call ${intent.id} under its idempotency key (attempt ${intent.attempts}); what its first call did is unknown, so it stays in doubt: compare the request sent each time (docs/acquirer-port.md)`,
  );
}

/** A new intent's record, open, before its first call (`build` in acquirerIntents). */
function intentOf(fields: IntentFields, createdAt: string, lockedUntil: string): AcquirerIntentDoc {
  return {
    id: acquirerKey(fields.objectId, fields.operation),
    livemode: fields.livemode,
    created_at: createdAt,
    operation: fields.operation,
    finish: fields.finish,
    charge_id: fields.chargeId,
    refund_id: fields.refundId ?? null,
    amount: fields.amount,
    currency: fields.currency,
    reference: fields.reference,
    state: "open",
    resolution: null,
    ...optionalFields(fields),
    locked_until: lockedUntil,
    resolved_at: null,
    token: fields.token ?? null,
    capture: fields.capture ?? null,
    attempts: 1,
  };
}

export function acquirerIntents(deps: IntentDeps): AcquirerIntents {
  const { store, clock } = deps;
  const lockUntil = (livemode: boolean) => iso(new Date(clock.now(livemode).getTime() + deps.lockSeconds * 1000));

  const build = (fields: IntentFields) =>
    intentOf(fields, clock.createdAt(fields.livemode), lockUntil(fields.livemode));

  return {
    build,

    /**
     * Writes the intent before its call is sent (a single insert: atomic on its own). When one is
     * already open for the same object and operation (a crashed attempt, or a retry), that one is
     * resumed instead: its call is sent again with the same key and the same request, so the acquirer
     * applies it once. Refused (409) when it was resolved meanwhile.
     */
    async open(fields: IntentFields): Promise<AcquirerIntentDoc> {
      const intent = build(fields);
      try {
        await store.insert("acquirer_intents", intent);
        return intent;
      } catch (err) {
        if (!(err instanceof DuplicateKeyError)) throw err;
      }
      const resumed = await store.update(
        "acquirer_intents",
        intent.id,
        { set: { locked_until: lockUntil(fields.livemode) }, inc: { attempts: 1 } },
        { state: "open" },
      );
      if (!resumed) throw conflict();
      return resumed;
    },

    /**
     * Marks the intent resolved inside the transaction that commits its outcome, conditionally on the
     * state it was taken in: a request's intent taken over by the recovery job can no longer commit.
     */
    async resolve(
      tx: ChargeTx,
      intent: AcquirerIntentDoc,
      resolution: AcquirerIntentDoc["resolution"],
      charge?: { status: ChargeStatus },
    ): Promise<void> {
      if (charge && !keptOnceResolved(intent, resolution, charge.status)) {
        // Conditional like the update below: an intent the recovery job took over is its to resolve.
        if (!(await tx.delete("acquirer_intents", intent.id, { state: intent.state }))) throw conflict();
        return;
      }
      const done = await tx.update(
        "acquirer_intents",
        intent.id,
        { set: resolvedFields(intent, resolution, iso(clock.now(intent.livemode))) },
        { state: intent.state },
      );
      if (!done) throw conflict();
    },

    /** Resolves the intent on its own (a refund's call, after the refund's transaction; a reversal). */
    async resolveAlone(intent: AcquirerIntentDoc, resolution: AcquirerIntentDoc["resolution"]): Promise<boolean> {
      const done = await store.update(
        "acquirer_intents",
        intent.id,
        { set: resolvedFields(intent, resolution, iso(clock.now(intent.livemode))) },
        { state: intent.state },
      );
      return done !== null;
    },

    /** Deletes an intent whose first call the acquirer refused as a request (a 4xx: nothing started). */
    discard: (intent) => store.delete("acquirer_intents", intent.id, { state: intent.state }),

    /**
     * Waits (at most the lock) for an intent the recovery job is completing this moment to be resolved,
     * so a request that meets it can answer from the outcome rather than with a refusal a retry with the
     * same Idempotency-Key would be given again. Returns the intent as it then is.
     */
    async settled(id: string): Promise<AcquirerIntentDoc | null> {
      const deadline = Date.now() + deps.lockSeconds * 1000;
      for (;;) {
        const intent = await store.get("acquirer_intents", id);
        if (!intent || intent.state === "resolved" || Date.now() >= deadline) return intent;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },

    /** The open authorization or local start a retry of the same request (same Idempotency-Key) resumes, if any. */
    async resumable(livemode: boolean, requestKey: string): Promise<AcquirerIntentDoc | null> {
      const [intent] = await store.findAll(
        "acquirer_intents",
        {
          livemode,
          request_key: requestKey,
          state: { $in: ["open", "recovering"] },
          operation: { $in: ["authorize", "start_local"] },
        },
        1,
      );
      if (!intent) return null;
      // Taken from the recovery job's reach (its lock renewed) while it is still open; one the job is
      // reversing this moment is waited for, and the retry then makes a new charge.
      const taken =
        intent.state === "open"
          ? await store.update(
              "acquirer_intents",
              intent.id,
              { set: { locked_until: lockUntil(livemode) } },
              { state: "open", locked_until: intent.locked_until },
            )
          : null;
      if (taken) return taken;
      const settled = await this.settled(intent.id);
      return settled?.state === "open" ? settled : null;
    },

    /**
     * The recovery job's pass over one environment: every intent whose lock has run out is taken over
     * (conditionally: one instance does it) and handed to `finish`, which sends its call again and
     * resolves it. Returns how many were resolved; a failure leaves the intent for the next pass.
     */
    async recoverDue(
      livemode: boolean,
      finish: (intent: AcquirerIntentDoc) => Promise<void>,
      log: DomainLog,
      limit = 100,
    ): Promise<number> {
      const now = iso(clock.now(livemode));
      const due = await store.findAll(
        "acquirer_intents",
        { livemode, state: { $in: ["open", "recovering"] }, locked_until: { $lte: now } },
        limit,
        { by: "locked_until", direction: "asc" },
      );
      let resolved = 0;
      for (const found of due) {
        const taken = await store.update(
          "acquirer_intents",
          found.id,
          { set: { state: "recovering", locked_until: lockUntil(livemode) }, inc: { attempts: 1 } },
          { state: found.state, locked_until: found.locked_until },
        );
        if (!taken) continue; // another instance took it, or its request resolved it meanwhile
        try {
          await finish(taken);
          resolved++;
        } catch (err) {
          log.error(
            { err, intent: taken.id, charge: taken.charge_id },
            "could not resolve a call to the acquirer left in doubt; the next recovery pass retries it",
          );
        }
      }
      return resolved;
    },

    /** The environment's open or recovering intents (tests, and the operator's view). */
    unresolved: (livemode: boolean) =>
      store.findAll("acquirer_intents", { livemode, state: { $in: ["open", "recovering"] } }, 1000),
  };
}

/** The acquirer intents of the charges area (calls to the acquirer that may be left in doubt, and their recovery). */
export interface AcquirerIntents {
  build: (fields: IntentFields) => AcquirerIntentDoc;
  /**
   * Writes the intent before its call is sent (a single insert: atomic on its own). When one is
   * already open for the same object and operation (a crashed attempt, or a retry), that one is
   * resumed instead: its call is sent again with the same key and the same request, so the acquirer
   * applies it once. Refused (409) when it was resolved meanwhile.
   */
  open(fields: IntentFields): Promise<AcquirerIntentDoc>;
  /**
   * Marks the intent resolved inside the transaction that commits its outcome, conditionally on the
   * state it was taken in: a request's intent taken over by the recovery job can no longer commit. Given
   * the charge as that transaction records it, deletes the intent instead when nothing needs it any more
   * (keptOnceResolved).
   */
  resolve(
    tx: ChargeTx,
    intent: AcquirerIntentDoc,
    resolution: AcquirerIntentDoc["resolution"],
    charge?: { status: ChargeStatus },
  ): Promise<void>;
  /** Resolves the intent on its own (a refund's call, after the refund's transaction; a reversal). */
  resolveAlone(intent: AcquirerIntentDoc, resolution: AcquirerIntentDoc["resolution"]): Promise<boolean>;
  /**
   * Deletes an intent whose first call the acquirer refused as a request (nothing was started or
   * authorized: a 4xx), conditionally on its state: nothing is left for the recovery job to repeat. True
   * when it was deleted.
   */
  discard(intent: AcquirerIntentDoc): Promise<boolean>;
  /**
   * Waits (at most the lock) for an intent the recovery job is completing this moment to be resolved,
   * so a request that meets it can answer from the outcome rather than with a refusal a retry with the
   * same Idempotency-Key would be given again. Returns the intent as it then is.
   */
  settled(id: string): Promise<AcquirerIntentDoc | null>;
  /** The open authorization or local start a retry of the same request (same Idempotency-Key) resumes, if any. */
  resumable(livemode: boolean, requestKey: string): Promise<AcquirerIntentDoc | null>;
  /**
   * The recovery job's pass over one environment: every intent whose lock has run out is taken over
   * (conditionally: one instance does it) and handed to `finish`, which sends its call again and
   * resolves it. Returns how many were resolved; a failure leaves the intent for the next pass.
   */
  recoverDue(
    livemode: boolean,
    finish: (intent: AcquirerIntentDoc) => Promise<void>,
    log: DomainLog,
    limit?: number,
  ): Promise<number>;
  /** The environment's open or recovering intents (tests, and the operator's view). */
  unresolved: (livemode: boolean) => Promise<AcquirerIntentDoc[]>;
}
