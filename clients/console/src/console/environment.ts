// Where a console session acts, in words (docs/console.md "The console"): production, the account's
// default sandbox, or one sandbox on demand (spec/resources/sandboxes.tsp IsolatedSandbox), which the
// banner, the page title and the sandboxes page show so that a person never mistakes one for another.
// Pure functions of the session, unit-tested in environment.test.ts.

/** What the session answer (GET/POST /console/session) says of where it acts. */
export interface SessionPlace {
  key: { livemode: boolean; scopes: string[] };
  /** The sandbox on demand the session is in; null for the account's own (production or the default sandbox). */
  sandbox: { id: string; name: string } | null;
}

export interface Environment {
  kind: "production" | "sandbox" | "sandbox-on-demand";
  /** The banner's first words (shown in capitals). */
  label: string;
  /** The banner's sentence after it. */
  detail: string;
  /** For the page title: `Production`, `Sandbox`, `Sandbox QA: Ana`. */
  title: string;
}

export function environmentOf(session: SessionPlace): Environment {
  if (session.key.livemode) {
    return {
      kind: "production",
      label: "Production",
      detail: " — live data: changes here move real money and affect real customers.",
      title: "Production",
    };
  }
  if (session.sandbox) {
    return {
      kind: "sandbox-on-demand",
      label: `Sandbox “${session.sandbox.name}”`,
      detail: ` (${session.sandbox.id}) — an isolated sandbox: only its own test data, not the default sandbox's. Nothing here moves real money.`,
      title: `Sandbox ${session.sandbox.name}`,
    };
  }
  return {
    kind: "sandbox",
    label: "Sandbox",
    detail: " — test data of the default sandbox: nothing here moves real money.",
    title: "Sandbox",
  };
}

/**
 * Why the sandboxes page cannot manage sandboxes for this session, or null when it can: sandboxes are
 * created, listed and deleted with a `*` key of the account (its default sandbox or production), never
 * with a key of a sandbox on demand (spec/resources/sandboxes.tsp: those answer 403).
 */
export function sandboxesUnavailable(session: SessionPlace): string | null {
  if (session.sandbox) {
    return `You are signed in to the sandbox “${session.sandbox.name}” (${session.sandbox.id}). Sandboxes are managed from the account, not from inside one: sign in with a key of the default sandbox or of production that has scope *.`;
  }
  if (!session.key.scopes.includes("*")) {
    return `Sandboxes are managed with a key that has scope * (everything, including keys); this session's key has ${session.key.scopes.join(", ")}. Sign in with a * key to create, delete or open sandboxes.`;
  }
  return null;
}

/** What deleting a sandbox erases, said before it is done (DELETE /v1/sandboxes/{id}). */
export function erasureText(sandbox: { id: string; name: string }): string {
  return `Deleting the sandbox “${sandbox.name}” (${sandbox.id}) erases everything in it: its merchants, cards (their vault key is destroyed), charges, refunds, disputes, cashouts, payment links, events, webhook endpoints and deliveries, service keys, console sessions and its clock. Its keys stop working at once, and so does any console session signed in to it. This cannot be undone.`;
}
