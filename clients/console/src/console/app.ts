import type { PaymentsClient } from "@payments/client";
import type { OperationId } from "@payments/contract/operations";
import type { Session } from "./api.ts";
import { money, shownTime, type TimeFrame } from "./format.ts";
import { announce, h } from "./ui.ts";

// What every page gets, and what a page is. Pages live in ./pages/ and are listed in ./pages/index.ts.

export interface Route {
  /** The address's path after `#/`, split: `["charges", "tx_…"]`. */
  segments: string[];
  query: URLSearchParams;
}

export interface Ctx {
  session: Session;
  api: PaymentsClient;
  /** Whether the signed-in key may call the operation (its scopes, from the contract). */
  can(operationId: OperationId): boolean;
  /** Goes to `#/<path>?<query>`. */
  go(path: string, query?: Record<string, string>): void;
  /** Renders the current address again (after a change). */
  refresh(): void;
  /**
   * Shows a secret once, with a copy button and a warning; resolves when dismissed. `then`: one more
   * button (the new sandbox's "Open"), which closes the dialog and runs.
   */
  showSecret(title: string, secret: string, note: string, then?: { label: string; run: () => void }): Promise<void>;
  /**
   * Ends this session and signs in with another key (the sandboxes page's "open"): the browser has one
   * session cookie, so the new session replaces this one. A refused key lands on the sign-in page, saying why.
   */
  signInWith(secret: string): Promise<void>;
}

/**
 * Runs a page's action (cancel, submit, accept…): on success says `done` to screen readers and shows the
 * page again; on failure says the server's message and shows it in the page's error box.
 */
export async function act(
  ctx: Pick<Ctx, "refresh">,
  pageError: HTMLElement,
  done: string,
  run: () => Promise<unknown>,
): Promise<void> {
  try {
    await run();
    announce(done);
    ctx.refresh();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    announce(message);
    pageError.textContent = message;
    pageError.hidden = false;
  }
}

export interface PageDef {
  /** The address's first segment, `#/<path>`. */
  path: string;
  title: string;
  /** Shown in the navigation when the key may call any of these (usually the page's list operation). */
  needs: OperationId[];
  /** Shown to sandbox keys only (its operations answer 404 in production). */
  sandboxOnly?: boolean;
  /**
   * Opens at its address for every session, also one whose key `needs` does not allow (then it is not in
   * the navigation): the page itself explains why this session cannot use it (the sandboxes page).
   */
  explainsWhenUnavailable?: boolean;
  render(ctx: Ctx, route: Route): HTMLElement | Promise<HTMLElement>;
}

// Which clock a time is on (docs/console.md "Times in the sandbox"). In the sandbox, the objects' own
// times (created_at, expiries, attempts) are on the sandbox clock, which may run days ahead of the
// server's; keys, sessions, the request log and a webhook secret's grace period stay on the server's own
// (spec/resources/sandbox-clock.tsp SandboxClock). A time is shown against its own clock's now, so an
// object made just now on an advanced sandbox clock reads "just now", never "in 3 days".

/** `environment`: the signed-in key's environment's clock (the sandbox clock for a sandbox key); `server`: the server's own. */
export type ClockKind = "environment" | "server";

let sandbox = false;
/** How far the sandbox clock runs ahead of this browser's clock, in ms; null while unknown. */
let sandboxAheadMs: number | null = 0;

/** Sets the environment the console works in: a sandbox clock's time is unknown until it is read. */
export function setEnvironment(livemode: boolean): void {
  sandbox = !livemode;
  sandboxAheadMs = livemode ? 0 : null;
}

/**
 * Takes the sandbox clock's time now (GET /v1/sandbox/clock `now`, or an advance's `clock.now`), read at
 * `readAt` (this browser's clock), so the sandbox's times read against the sandbox's now from then on.
 */
export function setSandboxNow(now: string, readAt = Date.now()): void {
  const at = Date.parse(now);
  if (sandbox && !Number.isNaN(at)) sandboxAheadMs = at - readAt;
}

/** The clock a time of the given kind is read against, now. */
export function timeFrame(clock: ClockKind, at = Date.now()): TimeFrame {
  if (clock === "server" || !sandbox) return { now: new Date(at), sandbox: false };
  return { now: sandboxAheadMs === null ? null : new Date(at + sandboxAheadMs), sandbox: true };
}

function timeElement(iso: string | null | undefined, empty: string, clock: ClockKind): HTMLElement {
  if (!iso) return h("span", { class: "muted" }, empty);
  const shown = shownTime(iso, timeFrame(clock));
  return h("time", { datetime: iso, title: shown.title, "data-clock": clock }, shown.text);
}

/**
 * An object's time, on its environment's clock (the sandbox clock for sandbox objects), shown as
 * "3 minutes ago" with the exact time on hover; kept current by the page's ticker.
 */
export function time(iso: string | null | undefined, empty = "never"): HTMLElement {
  return timeElement(iso, empty, "environment");
}

/** A time on the server's own clock in both environments (keys, the request log, a secret's grace period). */
export function serverTime(iso: string | null | undefined, empty = "never"): HTMLElement {
  return timeElement(iso, empty, "server");
}

/** Refreshes every time on the page against its clock (after a tick, or once the sandbox clock was read). */
export function tickTimes(at = Date.now()): void {
  for (const el of document.querySelectorAll<HTMLTimeElement>("time[data-clock]")) {
    const shown = shownTime(el.dateTime, timeFrame(el.dataset.clock === "server" ? "server" : "environment", at));
    el.textContent = shown.text;
    el.title = shown.title;
  }
}

/** An object's id (`tx_` and 24 base62 characters): set like code, which is also narrower in a table. */
const ID = /^[a-z]+_[0-9A-Za-z]{24}$/;

/** A link to a route of the console. */
export function link(path: string, text: string, query?: Record<string, string>): HTMLAnchorElement {
  const q = query ? new URLSearchParams(query).toString() : "";
  return h("a", { href: `#/${path}${q ? `?${q}` : ""}`, class: ID.test(text) ? "id" : null }, text);
}

/** A page's heading and, beside it, its actions. */
export function pageHeader(title: string, ...actions: (HTMLElement | null | false)[]): HTMLElement {
  return h(
    "div",
    { class: "page-header" },
    h("h1", { id: "page-title", tabindex: -1 }, title),
    h("div", { class: "actions" }, actions),
  );
}

/** An amount as people read it (`USD 1,234.56`), never broken across two lines. */
export function amount(value: number, currency: string): HTMLElement {
  return h("span", { class: "nowrap" }, money(value, currency));
}

/** A card as people recognise it (`visa •••• 4242`), never broken across two lines. */
export function cardLabel(brand: string | null | undefined, last4: string | null | undefined): HTMLElement {
  return h("span", { class: "nowrap" }, `${brand ?? "card"} •••• ${last4 ?? ""}`);
}
