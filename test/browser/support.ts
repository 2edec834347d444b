import { existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import axe from "axe-core";
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, expect } from "vitest";
import type { TestClock } from "../support/clock.ts";
import { type Logger, startTestServer, type TestServer } from "../support/server.ts";

// What every browser suite (the hosted payment page, the console, the reference) shares: Debian's
// Chromium driven by playwright-core (no browser download is possible on these machines), a real
// server per suite with the console's pages built, and the checks pages get (accessibility, requests
// to other hosts, storage, keyboard reach). Screenshots go to test/browser/artifacts/ (ignored by git).

const here = dirname(fileURLToPath(import.meta.url));
export const ARTIFACTS = join(here, "artifacts");
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** expect.poll's limits for page changes: vitest's one second is too short on a busy two-core machine. */
export const POLL = { timeout: 15_000, interval: 100 };

/** Builds the pages the server serves, unless they are newer than their sources (clients/console/build.mjs). */
export async function buildPages(): Promise<void> {
  const build = await import("../../clients/console/build.mjs");
  await build.ensureBuilt();
}

export async function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `No Chromium at ${CHROMIUM}: install Debian's (apt-get install -y chromium), as .ci/run does, or set CHROMIUM_PATH`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage"],
  });
}

/**
 * A server with the pages built, for one suite. `logger`: where its log goes (default: nowhere);
 * `clock`: its clock, which the suite moves (default: the real one).
 */
export async function startBrowserServer(
  env: Record<string, string> = {},
  options: { logger?: Logger; clock?: TestClock } = {},
): Promise<TestServer> {
  await buildPages();
  return startTestServer(env, {
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.clock ? { now: options.clock.now } : {}),
  });
}

/** The desktop window the suites open their pages in (the widths suite tries others). */
export const DESKTOP = { width: 1280, height: 800 } as const;

/** What a suite opens before its tests: a server with the pages built, Chromium, and one watched page. */
export interface BrowserSuite {
  server: TestServer;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  watched: Watched;
}

/**
 * The set-up every browser suite repeats, in the suite (`describe`) it is called in: before its tests a
 * server (startBrowserServer's `env` and `options`), Chromium and a page in a DESKTOP context
 * (`options.context` adds to its options), watched from the start, handed to `use` (which keeps what it
 * needs, grants permissions…); after them, the browser and the server closed, whatever was opened.
 */
export function browserSuite(
  use: (suite: BrowserSuite) => void | Promise<void>,
  env: Record<string, string> = {},
  options: { logger?: Logger; clock?: TestClock; context?: BrowserContextOptions } = {},
): void {
  let server: TestServer | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    const started = await startBrowserServer(env, options);
    server = started;
    const launched = await launch();
    browser = launched;
    const context = await launched.newContext({ viewport: DESKTOP, ...options.context });
    const page = await context.newPage();
    await use({ server: started, browser: launched, context, page, watched: watch(page) });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });
}

export interface Watched {
  /** Console messages of level error, and CSP violations and script errors, seen on the page. */
  problems: string[];
  /** Every console message of the page, whatever its level. */
  messages: string[];
  /** Every URL the page requested. */
  requests: string[];
}

/** Records what a page logs (errors, CSP refusals and script errors apart) and every request it makes. */
export function watch(page: Page): Watched {
  const watched: Watched = { problems: [], messages: [], requests: [] };
  page.on("console", (msg) => {
    watched.messages.push(msg.text());
    if (msg.type() === "error") watched.problems.push(msg.text());
  });
  page.on("pageerror", (err) => watched.problems.push(`page error: ${err.message}`));
  page.on("request", (req) => watched.requests.push(req.url()));
  return watched;
}

/** Nothing was requested from another host. */
export function expectSameOrigin(watched: Watched, origin: string): void {
  const foreign = watched.requests.filter(
    (url) => !url.startsWith(origin) && !url.startsWith("data:") && !url.startsWith("blob:"),
  );
  expect(foreign).toEqual([]);
}

/** Signs in through the page's form, as a person would. */
export async function signIn(page: Page, url: string, key: string): Promise<void> {
  await page.goto(`${url}/console`);
  await page.getByLabel("Service key", { exact: true }).fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("navigation", { name: "Console" }).waitFor();
}

// The one accessibility check of the browser suites (the hosted payment page, the console, the
// reference): axe-core's WCAG 2.1 A and AA rules and its best practices, run inside the page. axe is
// evaluated through the DevTools protocol, so the page's Content-Security-Policy stays as it is.

const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"];

/** The serious and critical violations on the page, one line each (rule, help, the elements). */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  await page.evaluate(axe.source);
  // An expression as a string: it runs in the page, whose globals (document, axe) this program does not type.
  const results = (await page.evaluate(
    `axe.run(document, { runOnly: { type: "tag", values: ${JSON.stringify(TAGS)} }, resultTypes: ["violations"] })`,
  )) as { violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[] };
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`);
}

/** No serious or critical accessibility violation (axe-core's WCAG 2.1 A and AA rules and best practices). */
export async function expectAccessible(page: Page, what: string): Promise<void> {
  expect(await accessibilityProblems(page), `accessibility of ${what}`).toEqual([]);
}

/** Waits for a console page's heading, and for its lists to have loaded. */
export async function settle(page: Page, heading: string | RegExp): Promise<void> {
  await page.getByRole("heading", { level: 1, name: heading }).waitFor();
  await page.waitForFunction(
    () => !document.querySelector("main[aria-busy]") && !document.body.textContent?.includes("Loading…"),
  );
}

/** Opens a console address afresh (a reload when the page is on it already) and waits for it to settle. */
export async function openConsole(
  page: Page,
  serverUrl: string,
  hash: string,
  heading: string | RegExp,
): Promise<void> {
  const url = `${serverUrl}/console#/${hash}`;
  if (page.url() === url) await page.reload();
  else await page.goto(url);
  await settle(page, heading);
}

/** Every enabled control (of the page, or of what `within` selects, such as an open dialog) is reached by Tab. */
export async function expectKeyboardReachesEverything(page: Page, what: string, within = "body"): Promise<void> {
  const actions = await actionsOf(page, within);
  const reached = await tabThrough(page);
  const missing = [...actions];
  for (const r of reached) {
    const i = missing.indexOf(r);
    if (i >= 0) missing.splice(i, 1);
  }
  expect(missing, `controls of ${what} that Tab never reached`).toEqual([]);
  expect(actions.length).toBeGreaterThan(3);
}

/** The checks every console page gets: screenshots (when named), axe, and Tab reaching every control. */
export async function checkPage(page: Page, what: string, screenshot?: string): Promise<void> {
  if (screenshot) await screenshots(page, screenshot);
  await expectAccessible(page, what);
  await expectKeyboardReachesEverything(page, what);
}

export interface StorageSnapshot {
  cookies: { name: string; value: string; httpOnly: boolean; sameSite: string; secure: boolean }[];
  localStorage: Record<string, string>;
  sessionStorage: Record<string, string>;
  /** What document.cookie shows to the page's own scripts. */
  documentCookie: string;
}

/** Everything the browser stores for the page: its cookies (HttpOnly ones too), localStorage, sessionStorage. */
export async function storage(context: BrowserContext, page: Page): Promise<StorageSnapshot> {
  const cookies = (await context.cookies()).map((c) => ({
    name: c.name,
    value: c.value,
    httpOnly: c.httpOnly,
    sameSite: c.sameSite,
    secure: c.secure,
  }));
  const inPage = await page.evaluate(() => {
    const dump = (s: Storage) =>
      Object.fromEntries(
        Array.from({ length: s.length }, (_, i) => s.key(i) ?? "").map((k) => [k, s.getItem(k) ?? ""]),
      );
    return { localStorage: dump(localStorage), sessionStorage: dump(sessionStorage), documentCookie: document.cookie };
  });
  return { cookies, ...inPage };
}

/** No service key secret and no card number anywhere in the browser's storage. */
export function expectNothingSecretStored(snapshot: StorageSnapshot, secrets: string[]): void {
  const text = JSON.stringify(snapshot);
  for (const secret of secrets) expect(text).not.toContain(secret);
  expect(text).not.toMatch(/key_(test|live)_[0-9A-Za-z]{32}/);
  // A run of 12 or more digits (with or without separators) would be a card number.
  expect(text).not.toMatch(/(?:\d[ -]?){12,19}/);
}

/**
 * Presses Tab until focus comes back round, and returns a description of every element focus reached.
 * Each description is the element's accessible name, or its label text, or its text.
 */
export async function tabThrough(page: Page, limit = 400): Promise<string[]> {
  await page.evaluate(() => {
    (document.activeElement as HTMLElement | null)?.blur();
    window.getSelection()?.removeAllRanges();
  });
  const reached: string[] = [];
  let first: string | null = null;
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press("Tab");
    const id = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      if (!el || el === document.body) return null;
      if (!el.dataset.tabProbe) el.dataset.tabProbe = String(Math.random());
      const name =
        el.getAttribute("aria-label") ??
        (el.id ? document.querySelector(`label[for="${el.id}"]`)?.textContent : null) ??
        el.textContent ??
        "";
      return `${el.dataset.tabProbe}|${el.tagName.toLowerCase()}|${name.trim().replace(/\s+/g, " ")}`;
    });
    if (id === null) continue;
    if (id === first) break;
    first ??= id;
    reached.push(id.split("|").slice(1).join("|"));
  }
  return reached;
}

/**
 * Every enabled, visible control of the page (buttons, links, fields), described as tabThrough does;
 * `within`: only those inside the element this selector finds (an open dialog, the rest being inert).
 */
export async function actionsOf(page: Page, within = "body"): Promise<string[]> {
  return page.evaluate((within) => {
    const controls = Array.from(
      (document.querySelector(within) ?? document).querySelectorAll<HTMLElement>(
        "a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex='-1'])",
      ),
    ).filter((el) => {
      if ((el as HTMLButtonElement).disabled) return false;
      if (el.closest("[hidden], details:not([open]) > :not(summary)")) return false;
      const rect = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      // The skip link is off-screen until focused; it is reached first by Tab.
      const offscreenSkip = el.classList.contains("skip");
      return offscreenSkip || (rect.width > 0 && rect.height > 0 && style.visibility !== "hidden");
    });
    return controls.map((el) => {
      const name =
        el.getAttribute("aria-label") ??
        (el.id ? document.querySelector(`label[for="${el.id}"]`)?.textContent : null) ??
        el.textContent ??
        "";
      return `${el.tagName.toLowerCase()}|${name.trim().replace(/\s+/g, " ")}`;
    });
  }, within);
}

/** Screenshots at desktop and phone widths into the artifacts folder (the whole page, or the first screen). */
export async function screenshots(page: Page, name: string, fullPage = true): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const size = page.viewportSize();
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.screenshot({ path: join(ARTIFACTS, `${name}-desktop.png`), fullPage });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: join(ARTIFACTS, `${name}-phone.png`), fullPage });
  if (size) await page.setViewportSize(size);
}

// The one horizontal-overflow check of the browser suites (the console's pages, the hosted payment page):
// at the widths people use, nothing in a page's main content is pushed off-screen or needs scrolling
// sideways (docs/console.md "Console and API reference").

/** Desktop widths every page must fit: a small laptop and a common desktop window. */
export const DESKTOP_WIDTHS = [1024, 1280] as const;

/** A phone's width (an iPhone 12 to 15 in portrait). */
export const PHONE_WIDTH = 390;

/** Every width a page must fit: a phone, a small laptop, a common desktop window. */
export const WIDTHS = [PHONE_WIDTH, ...DESKTOP_WIDTHS] as const;

export interface OverflowOptions {
  /**
   * Whether a data table may scroll sideways inside its own scrolling region: one that Tab reaches and
   * that is named (`role="region"`, `tabindex="0"`, `aria-label`), as the console's lists are on a phone
   * (WCAG 1.4.10 Reflow excepts data tables). Everything else must still fit. Default: false.
   */
  scrollingTables?: boolean;
}

/**
 * What sticks out sideways in the element `within` finds: the document scrolling sideways, a box that
 * scrolls or clips its content sideways (a table in its scrolling wrapper, a code block), or an element
 * reaching past the right edge of `within`. Each is described as `tag.class "its text…": by N px`; none
 * when everything fits. Elements hidden from view (closed details, hidden panels, visually-hidden text
 * for screen readers) do not count; form fields scrolling their own text do not either.
 */
export async function horizontalOverflow(
  page: Page,
  within = "main",
  options: OverflowOptions = {},
): Promise<string[]> {
  return page.evaluate(
    ([selector, scrollingTables]) => {
      const root = document.querySelector(selector);
      if (!root) return [`no ${selector} on the page`];
      const found: string[] = [];
      const describe = (el: Element) => {
        const classes = [...el.classList].map((c) => `.${c}`).join("");
        const text = (el.textContent ?? "").trim().replace(/\s+/g, " ").slice(0, 60);
        return `${el.tagName.toLowerCase()}${classes} "${text}"`;
      };
      const page = document.documentElement.scrollWidth - window.innerWidth;
      if (page > 1) found.push(`the page scrolls sideways: by ${page} px`);
      const edge = root.getBoundingClientRect().right;
      const clipsSideways = (el: Element) =>
        ["auto", "scroll", "hidden", "clip"].includes(getComputedStyle(el).overflowX);
      const past: HTMLElement[] = [];
      for (const el of root.querySelectorAll("*")) {
        if (!(el instanceof HTMLElement) || el.closest("[hidden], .visually-hidden, dialog:not([open])")) continue;
        if (["OPTION", "INPUT", "TEXTAREA", "SELECT"].includes(el.tagName)) continue;
        const rect = el.getBoundingClientRect();
        if (rect.width === 0 || rect.height === 0) continue;
        // Inside a box that scrolls or clips, that box is what is reported.
        let inside = false;
        for (let up = el.parentElement; up && up !== root && !inside; up = up.parentElement) inside = clipsSideways(up);
        if (inside) continue;
        const hiddenBy = el.scrollWidth - el.clientWidth;
        if (clipsSideways(el)) {
          const tableRegion =
            el.getAttribute("role") === "region" &&
            el.tabIndex === 0 &&
            Boolean(el.getAttribute("aria-label")) &&
            el.querySelector(":scope > table") !== null;
          if (hiddenBy > 1 && !(scrollingTables && tableRegion))
            found.push(`${describe(el)} scrolls or clips its content sideways: by ${hiddenBy} px`);
          continue;
        }
        // Its box, or the content running out of it (a word or a nowrap text wider than the box).
        const right = Math.max(rect.right, rect.left + el.scrollWidth);
        if (right - edge > 1) past.push(el);
      }
      // The innermost of the elements sticking out names the culprit; its ancestors stick out because of it.
      for (const el of past) {
        if (past.some((other) => other !== el && el.contains(other))) continue;
        const right = Math.max(el.getBoundingClientRect().right, el.getBoundingClientRect().left + el.scrollWidth);
        found.push(`${describe(el)} reaches past the right edge: by ${Math.round(right - edge)} px`);
      }
      return found.slice(0, 12);
    },
    [within, options.scrollingTables ?? false] as const,
  );
}
