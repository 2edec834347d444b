import type { Request, Response } from "express";
import type { OpenApiRequest } from "express-openapi-validator/dist/framework/types.js";
import type { Caller } from "../domain/kernel/caller.ts";
import type { IdempotencyScope } from "../domain/kernel/commit.ts";
import type { ServiceKeyDoc } from "../domain/service-keys/records.ts";

// What one middleware hands on to the later ones of the same request, in `res.locals`. Express types
// res.locals as `Record<string, any>`, so each reader used to cast what it found; every reader and
// writer goes through this one typed view instead, and the compiler checks both sides.

/** The keys a request's middleware set in res.locals, each with its one type. */
export interface RequestLocals {
  /** observability.ts: the request's id (X-Request-Id), set first. */
  requestId?: string;
  /** auth.ts or console.ts: who is calling, once the key or the console session is accepted. */
  caller?: Caller;
  /** auth.ts or console.ts: the service key behind the caller (its last use is recorded). */
  serviceKey?: ServiceKeyDoc;
  /** auth.ts or console.ts: whether the credential still holds (an event stream asks as it goes on). */
  stillAuthorized?: () => Promise<boolean>;
  /** console.ts: the request came through the console (a session, not a key). */
  console?: boolean;
  /** console.ts: why a console request is refused, answered after the rate limiters. */
  consoleRefusal?: { code: "unauthorized" | "forbidden"; detail: string };
  /** auth.ts, console.ts: why authentication failed, for the access log. */
  authFailure?: string;
  /** rate-limits.ts, event-stream.ts: the limit a request ran into, for the access log. */
  rateLimited?: string;
  /** sandbox-simulate.ts: the simulated failure the request asked for, for the access log. */
  simulated?: string;
  /** idempotency.ts: the request's idempotency scope, handed to the use case. */
  idempotency?: IdempotencyScope;
  /** public-operations.ts (PUBLIC_LIVEMODE): a public operation's object's environment. */
  publicLivemode?: boolean;
}

/** A response's locals, typed (Express's own are `Record<string, any>`, which this narrows without a cast). */
export function locals(res: Response): RequestLocals {
  return res.locals;
}

/** The caller of a route that runs after authentication (auth.ts or console.ts set it). */
export function authenticatedCaller(res: Response): Caller {
  const { caller } = locals(res);
  if (caller === undefined) throw new Error("no caller: this route runs after authentication, which sets one");
  return caller;
}

/**
 * Whether express-openapi-validator has looked at the request: it sets `req.openapi` (the route and the
 * operation it matched, the path parameters), whose shape its own types declare as OpenApiRequest.
 */
export function isOpenApiRequest(req: Request): req is OpenApiRequest {
  return "openapi" in req;
}
