import type { PaymentsClient } from "@payments/client";
import type { OperationId } from "@payments/contract/operations";
import type { Session } from "./api.ts";
import { exactTime, money, relativeTime } from "./format.ts";
import { h } from "./ui.ts";

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
  /** Shows a secret once, with a copy button and a warning; resolves when dismissed. */
  showSecret(title: string, secret: string, note: string): Promise<void>;
}

export interface PageDef {
  /** The address's first segment, `#/<path>`. */
  path: string;
  title: string;
  /** Shown in the navigation when the key may call any of these (usually the page's list operation). */
  needs: OperationId[];
  render(ctx: Ctx, route: Route): HTMLElement | Promise<HTMLElement>;
}

/** A time shown as "3 minutes ago", with the exact time on hover; kept current by the page's ticker. */
export function time(iso: string | null | undefined, empty = "never"): HTMLElement {
  if (!iso) return h("span", { class: "muted" }, empty);
  return h("time", { datetime: iso, title: exactTime(iso), "data-relative": "" }, relativeTime(iso, new Date()));
}

/** Refreshes every relative time on the page. */
export function tickTimes(now = new Date()): void {
  for (const el of document.querySelectorAll<HTMLTimeElement>("time[data-relative]")) {
    el.textContent = relativeTime(el.dateTime, now);
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
