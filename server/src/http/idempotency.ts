import { createHash } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import type { Logger } from "pino";
import type { AppStore } from "../domain/areas.ts";
import type { Now } from "../domain/kernel/caller.ts";
import type { IdempotencyDoc, IdempotencyScope } from "../domain/kernel/commit.ts";
import { DomainError } from "../domain/kernel/errors.ts";
import { iso } from "../domain/kernel/time.ts";
import { isRecord } from "../guards.ts";
import { DuplicateKeyError } from "../store/port.ts";
import { authenticatedCaller, locals } from "./locals.ts";

// Idempotency-Key on every POST (the contract's rules: spec/main.tsp). The record lives in the store, so
// it holds across instances, and it goes through three moments:
//
// 1. Claim. The first request inserts an in-flight record naming itself as owner (the insert is the
//    lock). Later requests with the same key replay the finished answer byte for byte, get 409 while the
//    owner is alive, or 422 when they carry a different request.
// 2. Outcome, with the change. The use case makes its writes through domain/kernel/commit.ts, which calls this
//    request's recorder inside that same store transaction: the record becomes `done` with the answer
//    (atomic phases). The write is conditional on still owning the key, so of a slow first request and a
//    retry that took its key over, at most one can commit.
// 3. After the answer, only for answers no transaction produced (a refusal such as 409 or 422, which
//    changed nothing): the answer is stored then. 5xx answers forget the key, so a retry runs again, and so
//    do 409 `conflict` answers (a race whose message says to retry: `raced`).
//
// A crash can leave a record in flight only when nothing was committed; once its lock runs out a retry
// takes the key over and runs the request again, which is then safe. Answers that carry a secret or a
// card number (the operation's `sensitive` flag, derived from the contract's `x-sensitive` models) are
// never stored: the record keeps only the id of the object, and a retry gets 409
// `idempotency_replay_unavailable` naming it. Keys themselves are stored only as SHA-256 digests.
// Request-validation failures never reach this middleware, as in Stripe.

export interface IdempotencyOptions {
  store: AppStore;
  now: Now;
  ttlSeconds: number;
  /** How long an in-flight record blocks retries before a retry may take it over (its owner died). */
  lockSeconds: number;
  logger: Logger;
}

/**
 * A 409 `conflict` refusal: the object changed under the request (a race, e.g. the recovery job completing
 * the charge's call to the acquirer: domain/charges/intents.ts), and its message says to retry. It changed
 * nothing and is not the request's outcome, so it is forgotten like a 5xx: stored, it would be replayed to
 * the very retry it asks for, forever (found by test/crash/adyen-crash.test.ts: a capture the recovery job
 * completed answered its client's retries with the stored 409).
 */
function raced(status: number, body: string): boolean {
  if (status !== 409) return false;
  try {
    const parsed: unknown = JSON.parse(body);
    return isRecord(parsed) && parsed.code === "conflict";
  } catch {
    return false;
  }
}

/** res.json's Content-Type, stored with every answer so a replay carries the same one. */
const JSON_TYPE = "application/json; charset=utf-8";

/**
 * `<environment>:<SHA-256 of the key>`: keys are per environment, and never stored in clear (one may hold
 * a card number). A public operation's keys carry a namespace (publicKeyNamespace) in the digest too, so
 * an anonymous payer's key can never meet, or probe, a key holder's.
 */
export function recordId(livemode: boolean, key: string, namespace?: string): string {
  const digest = createHash("sha256")
    .update(namespace === undefined ? key : `${namespace}\n${key}`)
    .digest("hex");
  return `${livemode ? "live" : "test"}:${digest}`;
}

/** The namespace of a public operation's keys: its path, which names the one object it acts on. */
export function publicKeyNamespace(path: string): string {
  return `public ${path}`;
}

/**
 * The guard of a public operation sets this in res.locals: the environment of the object the request acts
 * on (public requests have no key, hence no caller to take it from).
 */
export const PUBLIC_LIVEMODE = "publicLivemode";

/** A request's key space: its caller's environment, or for a public operation its object's and its path. */
function keySpace(req: Request, res: Response, isPublic: boolean): { livemode: boolean; namespace?: string } {
  if (!isPublic) return { livemode: authenticatedCaller(res).livemode };
  const livemode = locals(res)[PUBLIC_LIVEMODE];
  if (typeof livemode !== "boolean") throw new Error(`public operation ${req.path} set no ${PUBLIC_LIVEMODE}`);
  return { livemode, namespace: publicKeyNamespace(req.path) };
}

function requestHash(req: Request): string {
  return createHash("sha256")
    .update(`${req.method} ${req.baseUrl}${req.path}\n${JSON.stringify(req.body ?? null)}`)
    .digest("hex");
}

const keyError = (code: "idempotency_key_reused" | "idempotency_request_in_progress", message: string) =>
  new DomainError(code, message, { param: "Idempotency-Key" });

/** The fields that make a record `done`: the answer, or only the object's id when the answer may not be kept. */
function outcome(status: number, body: string, sensitive: boolean, atomic: boolean): Partial<IdempotencyDoc> {
  if (sensitive && status < 300) {
    let objectId: string | null = null;
    try {
      const parsed: unknown = JSON.parse(body);
      if (isRecord(parsed) && typeof parsed.id === "string") objectId = parsed.id;
    } catch {
      // Not JSON: nothing to name.
    }
    return { state: "done", status, headers: null, body: null, withheld: true, object_id: objectId, atomic };
  }
  return { state: "done", status, headers: { "content-type": JSON_TYPE }, body, withheld: false, atomic };
}

/**
 * The middleware for one POST operation. `sensitive`: its success answer carries a secret or a card
 * number (generated/types/operations.ts), so it is never stored. `public`: it takes no key
 * (`security: []`), so its keys live in the space keySpace() gives it.
 */
export function idempotency(options: IdempotencyOptions, operation: { sensitive: boolean; public?: boolean }) {
  const { store, now, ttlSeconds, lockSeconds, logger } = options;
  const { sensitive } = operation;
  const isPublic = operation.public === true;

  /** Takes the key for this request, or answers for it. Returns the record id when this request now owns the key. */
  async function claim(req: Request, res: Response, key: string, owner: string): Promise<string | null> {
    const space = keySpace(req, res, isPublic);
    const id = recordId(space.livemode, key, space.namespace);
    const hash = requestHash(req);
    for (let attempt = 0; attempt < 3; attempt++) {
      const at = now();
      const lockedUntil = iso(new Date(at.getTime() + lockSeconds * 1000));
      const record: IdempotencyDoc = {
        id,
        livemode: space.livemode,
        created_at: iso(at),
        request_hash: hash,
        state: "in_flight",
        owner,
        locked_until: lockedUntil,
        status: null,
        headers: null,
        body: null,
        withheld: false,
        object_id: null,
        atomic: false,
        expires_at: iso(new Date(at.getTime() + ttlSeconds * 1000)),
      };
      try {
        await store.insert("idempotency", record);
        return id;
      } catch (err) {
        if (!(err instanceof DuplicateKeyError)) throw err;
      }
      const existing = await store.get("idempotency", id);
      if (!existing) continue; // expired and swept meanwhile: try to claim again
      if (existing.expires_at <= iso(at)) {
        await store.delete("idempotency", id, { expires_at: existing.expires_at });
        continue;
      }
      if (existing.request_hash !== hash) {
        throw keyError(
          "idempotency_key_reused",
          "This Idempotency-Key was already used with a different request; use a new key for a new request.",
        );
      }
      if (existing.state === "done") {
        // Only a stored answer is replayed (and marked so); a withheld one is refused with a 409 of its
        // own, which replays nothing and so carries no Idempotent-Replayed header.
        if (existing.withheld) {
          const what = existing.object_id ? ` (${existing.object_id})` : "";
          throw new DomainError(
            "idempotency_replay_unavailable",
            `The request with this Idempotency-Key already succeeded${what}, but its answer carried a secret or a card number, which is never kept for replay. Look the object up, or send a new request with a new Idempotency-Key.`,
            { param: "Idempotency-Key" },
          );
        }
        res.setHeader("Idempotent-Replayed", "true");
        for (const [name, value] of Object.entries(existing.headers ?? {})) res.setHeader(name, value);
        res.status(existing.status ?? 200).end(existing.body ?? "");
        return null;
      }
      if (existing.locked_until > iso(at)) {
        throw keyError(
          "idempotency_request_in_progress",
          "A request with this Idempotency-Key is still being processed; retry shortly.",
        );
      }
      // The owner's instance died before committing anything (a commit would have made the record done):
      // take the key over, conditionally, so only one retry does, and run the request again.
      const taken = await store.update(
        "idempotency",
        id,
        { set: { owner, locked_until: lockedUntil } },
        { state: "in_flight", owner: existing.owner, locked_until: existing.locked_until },
      );
      if (taken) return id;
    }
    throw keyError("idempotency_request_in_progress", "Could not claim the Idempotency-Key; retry shortly.");
  }

  return async function idempotencyMiddleware(req: Request, res: Response, next: NextFunction) {
    const key = req.get("Idempotency-Key");
    if (key === undefined) return next();
    const owner = String(locals(res).requestId);
    let id: string | null;
    try {
      id = await claim(req, res, key, owner);
    } catch (err) {
      return next(err);
    }
    if (id === null) return; // replayed
    const owned = id;
    const stillOwned = { state: "in_flight", owner } as const;

    /**
     * Set once a use case's transaction that wrote the outcome has committed: nothing is left to store
     * afterwards. Not before: MongoDB may roll a run back and run it again (and that run may end in a
     * refusal, whose answer res.send must then store).
     */
    let recordedWithChange = false;
    const scope: IdempotencyScope = {
      recorder: (toReply) => ({
        key: owned,
        async record(tx, result) {
          const reply = toReply(result);
          const done = await tx.update(
            "idempotency",
            owned,
            { set: outcome(reply.status, JSON.stringify(reply.body), sensitive, true) },
            stillOwned,
          );
          // A retry took the key over while this request was still running (past its lock): this change
          // must not commit too, or the request would take effect twice.
          if (!done) {
            throw keyError(
              "idempotency_request_in_progress",
              "Another request with this Idempotency-Key took it over; this one was not applied.",
            );
          }
          tx.afterCommit(() => {
            recordedWithChange = true;
          });
        },
      }),
    };
    locals(res).idempotency = scope;

    // Answers no transaction recorded (refusals, failures) are stored or forgotten at res.send, before
    // the bytes go out, so an immediate retry already sees the finished record.
    const send = res.send.bind(res);
    res.send = (body?: unknown) => {
      const status = res.statusCode;
      if (recordedWithChange && status < 500) return send(body);
      const text = typeof body === "string" ? body : Buffer.isBuffer(body) ? body.toString("utf8") : String(body ?? "");
      if (status < 500 && status >= 200 && status < 300) {
        // A success whose change was not committed through domain/kernel/commit.ts: stored, but not crash-safe.
        logger.error({ path: req.path, status }, "idempotent answer stored after its change, not with it");
      }
      let settle: Promise<unknown>;
      if (status >= 500 || raced(status, text)) {
        // Forgotten so a retry runs again; if a transaction did commit, the record is `done` and stays.
        settle = store.delete("idempotency", owned, stillOwned);
      } else {
        const fields = outcome(status, text, sensitive, false);
        if (!fields.withheld) {
          // Read before res.send adds the charset to a string body, so added here as it will be sent.
          const type = res.getHeader("content-type");
          fields.headers =
            type === undefined
              ? {}
              : { "content-type": /charset=/i.test(String(type)) ? String(type) : `${type}; charset=utf-8` };
        }
        settle = store.update("idempotency", owned, { set: fields }, stillOwned);
      }
      settle.then(
        () => send(body),
        (err: unknown) => {
          logger.error({ err }, "could not store the idempotent response");
          send(body);
        },
      );
      return res;
    };
    next();
  };
}
