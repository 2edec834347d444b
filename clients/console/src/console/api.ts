import { createPaymentsClient, type PaymentsClient, type Problem } from "@payments/client";
import { OPERATIONS, type OperationId } from "@payments/contract/operations";

// The console's link to the server. Sign-in exchanges the pasted key for a session: the server sets
// an HttpOnly cookie the page cannot read, and answers with the key's public attributes and the
// session's CSRF token, which this module keeps in memory only (never in localStorage, sessionStorage
// or a cookie of ours). Every API call goes through the typed client to /console/api/v1/..., the same
// operations an integration calls with a Bearer key (server/src/http/console.ts).

export interface SessionKey {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  livemode: boolean;
  expires_at: string | null;
}

export interface Session {
  key: SessionKey;
  /**
   * The sandbox on demand the session is in (signed in with one of its keys: every request acts on its
   * objects); null for the account's own production or default sandbox (server/src/http/console.ts).
   */
  sandbox: { id: string; name: string } | null;
  expires_at: string;
  csrf_token: string;
}

const JSON_HEADERS = { "Content-Type": "application/json", Accept: "application/json" };

/** The session this browser has, or null (not signed in, or it has ended). */
export async function currentSession(): Promise<Session | null> {
  const res = await fetch("/console/session", { headers: { Accept: "application/json" }, cache: "no-store" });
  if (res.status === 204) return null;
  if (!res.ok) throw new Error(await problemText(res));
  return (await res.json()) as Session;
}

/**
 * Why a sign-in was refused, as the person at the sign-in page reads it: the server's problem speaks
 * to API clients ("send Authorization: Bearer <key>"), so its common cases are put in their words here.
 */
export function signInRefusal(status: number, detail: string): string {
  if (status === 401) {
    return "That key was not accepted. Check that you pasted the whole secret (it starts with key_test_ or key_live_) and that the key has not been revoked, rotated out or expired.";
  }
  if (status === 400) return "Paste a service key to sign in.";
  if (status === 429) return "Too many sign-in attempts from this computer. Wait a minute, then try again.";
  return detail;
}

/** Signs in with a service key's secret; throws with the reason, in words, when it is refused. */
export async function signIn(secret: string): Promise<Session> {
  const res = await fetch("/console/session", {
    method: "POST",
    headers: JSON_HEADERS,
    body: JSON.stringify({ key: secret }),
  });
  if (!res.ok) throw new Error(signInRefusal(res.status, await problemText(res)));
  return (await res.json()) as Session;
}

export async function signOut(session: Session): Promise<void> {
  await fetch("/console/session", { method: "DELETE", headers: { "X-CSRF-Token": session.csrf_token } });
}

async function problemText(res: Response): Promise<string> {
  try {
    const p = (await res.json()) as Partial<Problem>;
    return p.detail ?? p.title ?? `HTTP ${res.status}`;
  } catch {
    return `HTTP ${res.status}`;
  }
}

/**
 * The typed client for this session. `onUnauthorized` runs when an answer says the session has
 * ended (401), so the page can ask to sign in again.
 */
export function apiFor(session: Session, onUnauthorized: () => void): PaymentsClient {
  return createPaymentsClient({
    baseUrl: `${location.origin}/console/api`,
    headers: { "X-CSRF-Token": session.csrf_token },
    // One retry at most: a person is waiting, and the page says what failed.
    maxRetries: 1,
    fetch: async (request) => {
      const res = await fetch(request);
      if (res.status === 401) onUnauthorized();
      return res;
    },
  });
}

/** Whether the session's key may call an operation: its scopes from the contract, or `*`. */
export function allows(session: Session, operationId: OperationId): boolean {
  const op = OPERATIONS.find((o) => o.operationId === operationId);
  if (!op) return false;
  if (op.public) return true;
  // The sandbox helpers answer 404 in production.
  if (op.path.startsWith("/v1/sandbox/") && session.key.livemode) return false;
  const scopes = session.key.scopes;
  return scopes.includes("*") || (op.scopes as readonly string[]).some((s) => scopes.includes(s));
}

/** A problem (or any failure) as one line for the page: title, detail, request id. */
export function describeError(error: unknown): string {
  if (error && typeof error === "object" && "code" in error && "status" in error) {
    const p = error as Problem;
    const id = p.request_id ? ` (request ${p.request_id})` : "";
    return `${p.title}: ${p.detail ?? p.code}${id}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** A refused API call: its message is the problem as one line, `problem` the RFC 9457 problem itself. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly problem: Problem | undefined,
  ) {
    super(message);
  }
}

/** openapi-fetch's result: the data, or a thrown ApiError carrying the problem (and its text). */
export function need<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data !== undefined && result.response.ok) return result.data;
  const error = result.error;
  const problem =
    error && typeof error === "object" && "code" in error && "status" in error ? (error as Problem) : undefined;
  throw new ApiError(describeError(error ?? `HTTP ${result.response.status}`), problem);
}

/**
 * The fields a problem names (`param`, and each `errors[].param`) with what is wrong with them, keeping
 * only the fields `known` accepts when it is given. A body that fails a union (a cashout's destination)
 * is reported against every variant by the validator; the form knows which variant it sent, so it keeps
 * the failures of its own fields.
 */
export function fieldProblems(
  problem: Problem,
  known?: (param: string) => boolean,
): { param: string; message: string }[] {
  const all: { param: string; message: string }[] = [];
  for (const e of problem.errors ?? []) if (e.param) all.push({ param: e.param, message: e.message });
  if (all.length === 0 && problem.param) {
    // A problem about one field (422 insufficient_balance names `amount`): its detail is the message.
    all.push({ param: problem.param, message: problem.detail ?? problem.title });
  }
  const seen = new Set<string>();
  return all.filter((e) => {
    const key = `${e.param}\n${e.message}`;
    if (seen.has(key) || (known && !known(e.param))) return false;
    seen.add(key);
    return true;
  });
}
