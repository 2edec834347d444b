import type { OPERATIONS, OperationId } from "@payments/contract/operations";
import type { components, operations } from "@payments/contract/types";
import { isRecord } from "../../guards.ts";
import type { Page, PageResult } from "../../store/port.ts";
import type { Caller } from "./caller.ts";
import type { IdempotencyScope } from "./commit.ts";
import { DomainError } from "./errors.ts";

// The API's operations as the areas implement them: one thin handler per operation id (validated input →
// use case → serialized output), each area owning the fragment of the handler map for its operations
// (e.g. domain/charges/handlers.ts). The types come from the generated contract, so a handler that
// returns a body the contract does not allow, or an operation without a handler, fails `tsc`, not a
// customer. Nothing here knows Express: http/ turns a request into an OperationInput and a Reply into an
// answer.

export type { OperationId };

/**
 * The operations anyone may call without a key: the contract gives them `security: []` (`x-public`: the
 * health probes, Adyen's notifications, a payment page's pay). Their handlers have no caller.
 */
export type PublicOperationId = Extract<(typeof OPERATIONS)[number], { public: true }>["operationId"];

/** The operations that need a key with a scope: their handlers always have a caller. */
export type AuthenticatedOperationId = Exclude<OperationId, PublicOperationId>;

/** The contract's schemas: what every serializer builds (`Schemas["Charge"]`). */
export type Schemas = components["schemas"];

type Op<K extends OperationId> = operations[K];

export type RequestBody<K extends OperationId> =
  Op<K> extends {
    requestBody: { content: { "application/json": infer B } };
  }
    ? B
    : Op<K> extends { requestBody?: { content: { "application/json": infer B } } }
      ? B | undefined
      : undefined;

export type PathParams<K extends OperationId> =
  Op<K> extends { parameters: { path: infer P } }
    ? P extends Record<string, unknown>
      ? P
      : Record<string, never>
    : Record<string, never>;

export type QueryParams<K extends OperationId> =
  Op<K> extends { parameters: { query?: infer Q } }
    ? Q extends Record<string, unknown>
      ? Q
      : Record<string, never>
    : Record<string, never>;

type Responses<K extends OperationId> = Op<K>["responses"];
type SuccessStatus<K extends OperationId> = Extract<keyof Responses<K>, 200 | 201 | 202>;

/** One message of a server-sent event stream (the contract's `text/event-stream` answers). */
export interface StreamMessage {
  id: string;
  event: string;
  data: string;
}

/**
 * The body a streaming operation (a `text/event-stream` answer) replies with: its messages, produced
 * until `signal` aborts (the client went away) or the server shuts down. http/event-stream.ts writes
 * them; the domain never sees the connection.
 */
export interface EventStreamBody {
  readonly kind: "event-stream";
  messages(signal: AbortSignal): AsyncIterable<StreamMessage>;
}

/**
 * The body of an operation that may answer CSV (a `text/csv` answer beside its JSON one, asked for with
 * `Accept: text/csv`): its lines, header first, each ending in CRLF, produced page by page so the whole
 * answer never sits in memory. http/csv.ts writes them, waiting while the client reads slower.
 */
export interface CsvBody {
  readonly kind: "csv";
  lines(): AsyncIterable<string>;
}

/**
 * The body of an operation that answers plain text (`text/plain`): the one such answer is the `[accepted]`
 * Adyen requires from its notification endpoint (spec/resources/acquirer-notifications.tsp).
 */
export interface TextBody {
  readonly kind: "text";
  text: string;
}

/** A plain-text answer's body. */
export const plainText = (text: string): TextBody => ({ kind: "text", text });

/** Whether a reply's body is plain text. */
export function isText(body: unknown): body is TextBody {
  return isRecord(body) && body.kind === "text";
}

/** Whether a request's Accept header asks for CSV (`text/csv` among its types; JSON stays the default). */
export function acceptsCsv(accept: string | undefined): boolean {
  return (accept ?? "").split(",").some((part) => part.split(";")[0]?.trim().toLowerCase() === "text/csv");
}

type JsonOf<R> = R extends { content: { "application/json": infer B } }
  ? R extends { content: { "text/csv": unknown } }
    ? B | CsvBody
    : B
  : R extends { content: { "text/event-stream": unknown } }
    ? EventStreamBody
    : R extends { content: { "text/plain": unknown } }
      ? TextBody
      : never;

/** The success replies an operation may give: a status and a body the contract allows for it. */
export type Reply<K extends OperationId> = {
  [S in SuccessStatus<K>]: { status: S; body: JsonOf<Responses<K>[S]> };
}[SuccessStatus<K>];

/** What every operation's handler is given, caller aside. */
interface InputParts<K extends OperationId> {
  body: RequestBody<K>;
  path: PathParams<K>;
  query: QueryParams<K>;
  /** The request's id (Request-Id), for operations that have no caller (public ones). */
  requestId: string;
  /** The client's address (TRUST_PROXY aware). */
  ip: string | undefined;
  /** A request header the operation declares (validated against the contract), by name; undefined when absent. */
  header(name: string): string | undefined;
  /** Present when the request carries an Idempotency-Key (POST only). */
  idempotency?: IdempotencyScope | undefined;
}

/** An authenticated operation's input: the caller its key (or console session) identified, always there. */
export interface AuthenticatedInput<K extends AuthenticatedOperationId> extends InputParts<K> {
  caller: Caller;
}

/**
 * A public operation's input: no caller, even when the request carries a key (a public operation acts for
 * no key's holder: the pay page builds the link's own caller in its area). Reading `caller` here fails `tsc`.
 */
export interface PublicInput<K extends PublicOperationId> extends InputParts<K> {
  caller?: undefined;
}

/** An operation's input, by whether the contract asks for a key (PublicOperationId). */
export type OperationInput<K extends OperationId> = K extends PublicOperationId
  ? PublicInput<K>
  : K extends AuthenticatedOperationId
    ? AuthenticatedInput<K>
    : never;

export type OperationHandler<K extends OperationId> = (input: OperationInput<K>) => Promise<Reply<K>>;

/** An authenticated operation's handler. */
export type AuthenticatedHandler<K extends AuthenticatedOperationId> = (
  input: AuthenticatedInput<K>,
) => Promise<Reply<K>>;

/** Every operation of the contract with its handler: domain/areas.ts createHandlers merges the areas' fragments into it. */
export type Handlers = { [K in OperationId]: OperationHandler<K> };

/** What every area's handler fragment is built with. */
export interface HandlerKit {
  /**
   * A handler for a POST whose use case commits a change. `present` turns the use case's result into the
   * answer; when the request carries an Idempotency-Key it runs inside the use case's transaction too
   * (through the caller's outcome recorder, kernel/commit.ts), so the stored answer commits with the change.
   */
  answer<K extends AuthenticatedOperationId, R>(
    status: Reply<K>["status"],
    present: (result: R) => Reply<K>["body"],
    run: (input: AuthenticatedInput<K>) => Promise<R>,
  ): AuthenticatedHandler<K>;
  /** Called after a public operation's use case has committed its change (the crash tests' hook). */
  afterCommit(): void;
}

/** The kit, with `afterCommit` called after every committed POST (crash tests; a no-op otherwise). */
export function handlerKit(afterCommit: () => void = () => {}): HandlerKit {
  function answer<K extends AuthenticatedOperationId, R>(
    status: Reply<K>["status"],
    present: (result: R) => Reply<K>["body"],
    run: (input: AuthenticatedInput<K>) => Promise<R>,
  ): AuthenticatedHandler<K> {
    return async (input) => {
      // cast: `status` and `body` are each Reply<K>'s; for a generic K the compiler cannot pair them in its union.
      const toReply = (result: R) => ({ status, body: present(result) }) as Reply<K>;
      const caller = input.idempotency
        ? {
            ...input.caller,
            // cast: the recorder is handed what `run` returns (an R), through commit(), which types it unknown.
            outcome: input.idempotency.recorder((result) => toReply(result as R)),
          }
        : input.caller;
      const result = await run({ ...input, caller });
      afterCommit();
      return toReply(result);
    };
  }
  return { answer, afterCommit };
}

/**
 * A value the contract gives a default (`limit` 10, `grace_period_seconds` 86400): the request validator
 * fills it in before a handler runs (express-openapi-validator, useDefaults), so the contract is its only
 * home. Missing here means the validator was bypassed: a bug, not the caller's mistake.
 */
export function defaulted<T>(value: T | undefined, field: string): T {
  if (value === undefined) throw new Error(`${field}: the contract's default was not applied by the validator`);
  return value;
}

/** A list operation's page (ListParameters in spec/common/pagination.tsp). */
export function page(query: { limit?: number; starting_after?: string; ending_before?: string }): Page {
  if (query.starting_after !== undefined && query.ending_before !== undefined) {
    const message = "pass starting_after or ending_before, not both";
    throw new DomainError("invalid_request", `starting_after and ending_before: ${message}`, {
      param: "starting_after",
      errors: [
        { param: "starting_after", message },
        { param: "ending_before", message },
      ],
    });
  }
  return {
    limit: Number(defaulted(query.limit, "limit")),
    startingAfter: query.starting_after,
    endingBefore: query.ending_before,
  };
}

/** A page of records as the contract's list object (`{object: "list", data, has_more}`). */
export function list<D, T>(
  result: PageResult<D>,
  serialize: (d: D) => T,
): { object: "list"; data: T[]; has_more: boolean } {
  return { object: "list", data: result.data.map(serialize), has_more: result.hasMore };
}
