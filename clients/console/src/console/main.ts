import type { OperationId } from "@payments/contract/operations";
import { allows, apiFor, currentSession, type Session, signIn, signOut } from "./api.ts";
import { type Ctx, type PageDef, type Route, setEnvironment, setSandboxNow, tickTimes } from "./app.ts";
import { environmentOf } from "./environment.ts";
import { truncatedPrefix } from "./format.ts";
import { PAGES } from "./pages/index.ts";
import { announce, button, h, keyInput, openDialog } from "./ui.ts";

// The developer console (/console): sign in with a service key, then every page the key's scopes
// allow, each a client of the public API. The key is sent once, to sign in, and kept nowhere; the
// session lives in an HttpOnly cookie the page cannot read and its CSRF token in this module's memory.

const app = document.getElementById("app") as HTMLElement;

function parseRoute(): Route {
  const raw = location.hash.replace(/^#\/?/, "");
  const [path = "", search = ""] = raw.split("?", 2);
  return { segments: path.split("/").filter(Boolean).map(decodeURIComponent), query: new URLSearchParams(search) };
}

function go(path: string, query: Record<string, string> = {}): void {
  const q = new URLSearchParams(query).toString();
  const hash = `#/${path}${q ? `?${q}` : ""}`;
  if (location.hash === hash) window.dispatchEvent(new HashChangeEvent("hashchange"));
  else location.hash = hash;
}

/** The secret dialog: shown once, with a copy button and a warning; the secret leaves the page when it closes. */
function showSecret(
  title: string,
  secret: string,
  note: string,
  then?: { label: string; run: () => void },
): Promise<void> {
  let chosen = false;
  return new Promise((resolve) => {
    const status = h("p", { class: "hint", role: "status" });
    const code = h("code", { class: "secret", id: "new-secret" }, secret);
    const dialog = openDialog(title, (close) => [
      h(
        "p",
        { class: "warn-text" },
        h("strong", null, "Copy it now: it will not be shown again. "),
        note,
        " Store it in your secret manager; anyone holding it can act with its scopes.",
      ),
      h("div", { class: "secret-box" }, code),
      status,
      h(
        "div",
        { class: "actions" },
        button(
          "Copy secret",
          async () => {
            try {
              await navigator.clipboard.writeText(secret);
              status.textContent = "Copied to the clipboard.";
            } catch {
              // No clipboard permission: select the text so Ctrl+C copies it.
              const range = document.createRange();
              range.selectNodeContents(code);
              getSelection()?.removeAllRanges();
              getSelection()?.addRange(range);
              status.textContent = "Selected: press Ctrl+C (⌘C) to copy.";
            }
          },
          "primary",
        ),
        button("I have stored it", close),
        then
          ? button(then.label, () => {
              chosen = true;
              close();
            })
          : null,
      ),
    ]);
    dialog.addEventListener("close", () => {
      code.textContent = "";
      resolve();
      if (chosen) then?.run();
    });
  });
}

function signInView(message?: string): void {
  document.body.classList.remove("sandbox", "production", "sandbox-on-demand");
  const error = h("p", { class: "error-box", role: "alert", id: "signin-error", hidden: !message }, message ?? "");
  const input = keyInput({ id: "key", "aria-describedby": "key-hint" });
  const form = h(
    "form",
    { class: "signin", "aria-labelledby": "signin-title" },
    h("h1", { id: "signin-title" }, "Sign in to the console"),
    error,
    h("div", { class: "field" }, h("label", { for: "key" }, "Service key"), input),
    h(
      "p",
      { class: "hint", id: "key-hint" },
      "Paste a key_test_… or key_live_… secret. It is exchanged for a session and not kept by this page; the console then offers what the key's scopes allow.",
    ),
    h("button", { type: "submit", class: "btn primary" }, "Sign in"),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const secret = input.value.trim();
    try {
      await signIn(secret);
      // Signed in: the key leaves the page. Refused, it stays in its field to be corrected.
      input.value = "";
      // The cookie is HttpOnly: whether the browser kept it shows only in the next request.
      const session = await currentSession();
      if (!session) {
        error.textContent =
          "Signed in, but the browser did not keep the session cookie. Outside localhost the console needs HTTPS (set BASE_URL to the https address).";
        error.hidden = false;
        return;
      }
      start(session);
    } catch (err) {
      error.textContent = err instanceof Error ? err.message : String(err);
      error.hidden = false;
      input.setAttribute("aria-invalid", "true");
      input.setAttribute("aria-describedby", `${error.id} key-hint`);
      input.focus();
      input.select();
    }
  });
  app.replaceChildren(h("main", { id: "main", class: "signin-page" }, form));
  input.focus();
}

let ticker: number | undefined;
let onRoute: (() => void) | undefined;

function start(session: Session): void {
  let ended = false;
  const ctx: Ctx = {
    session,
    api: apiFor(session, () => {
      if (ended) return;
      ended = true;
      stop();
      signInView(
        "Your session has ended (signed out, expired, or its key was revoked, rotated or expired). Sign in again.",
      );
    }),
    can: (op: OperationId) => allows(session, op),
    go,
    refresh: () => render(),
    showSecret,
    async signInWith(secret: string) {
      ended = true;
      stop();
      // Signed out first: the new session's cookie replaces this one's, which could then not be ended.
      await signOut(session).catch(() => undefined);
      try {
        await signIn(secret);
        const next = await currentSession();
        if (next) return start(next);
        signInView("Signed in, but the browser did not keep the session cookie. Sign in again.");
      } catch (err) {
        signInView(err instanceof Error ? err.message : String(err));
      }
    },
  };
  const live = session.key.livemode;
  const env = environmentOf(session);
  setEnvironment(live);
  const visible = PAGES.filter((p) => p.needs.some((op) => ctx.can(op)) && !(p.sandboxOnly && live));
  /** The pages that open for this session: those in the navigation, and those that explain why not. */
  const reachable = PAGES.filter((p) => visible.includes(p) || p.explainsWhenUnavailable);
  document.body.classList.toggle("production", live);
  document.body.classList.toggle("sandbox", !live);
  document.body.classList.toggle("sandbox-on-demand", env.kind === "sandbox-on-demand");

  const main = h("main", { id: "main", tabindex: -1 });
  const navLinks = visible.map((p) => h("a", { href: `#/${p.path}`, "data-page": p.path }, p.title));
  const banner = h(
    "div",
    { class: `env-banner ${env.kind}`, role: "note", "aria-label": "Environment", id: "environment" },
    h("strong", null, env.label),
    env.detail,
  );
  const header = h(
    "header",
    { class: "topbar" },
    h("a", { class: "brand", href: "#/" }, "Payments console"),
    h(
      "div",
      { class: "who" },
      h(
        "span",
        null,
        "Signed in with ",
        h("strong", null, session.key.name),
        " ",
        h("code", null, truncatedPrefix(session.key.prefix)),
      ),
      button("Sign out", async () => {
        ended = true;
        stop();
        await signOut(session);
        signInView("Signed out.");
      }),
    ),
  );
  const nav = h(
    "nav",
    { class: "sidenav", "aria-label": "Console" },
    h(
      "ul",
      null,
      navLinks.map((a) => h("li", null, a)),
    ),
    h(
      "p",
      { class: "nav-foot" },
      h("a", { href: "/docs" }, "API reference"),
      " · ",
      h("a", { href: "/docs/errors" }, "Errors"),
    ),
  );
  app.replaceChildren(
    h(
      "a",
      {
        class: "skip",
        href: "#main",
        onclick: (e: Event) => {
          e.preventDefault();
          main.focus();
        },
      },
      "Skip to content",
    ),
    banner,
    header,
    h("div", { class: "shell" }, nav, main),
  );

  /**
   * Reads the sandbox clock before a page is drawn (another session or an integration may have moved it),
   * so the sandbox's times read against the sandbox's now (app.ts "Which clock a time is on"). A key
   * that may not read it (scope `*` only) gets the sandbox's times as exact times instead.
   */
  async function readSandboxClock(): Promise<void> {
    if (live || !ctx.can("getSandboxClock")) return;
    const sent = Date.now();
    const { data } = await ctx.api.GET("/v1/sandbox/clock");
    if (data) setSandboxNow(data.now, (sent + Date.now()) / 2);
  }

  let renderCount = 0;
  async function render(): Promise<void> {
    const route = parseRoute();
    const page: PageDef | undefined = reachable.find((p) => p.path === route.segments[0]);
    if (!page) {
      // The first page this key may see (the keys page for a `*` key).
      if (visible[0]) go(visible[0].path);
      else
        main.replaceChildren(
          h("h1", { id: "page-title", tabindex: -1 }, "Nothing to show"),
          h("p", null, "This key's scopes allow no page of the console."),
        );
      // A page the key may not see at all (say #/charges for a vault key) is not rendered: the
      // navigation offers only what the scopes allow, and the server would answer 403.
      return;
    }
    for (const a of navLinks) {
      if (a.dataset.page === page.path) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    }
    const mine = ++renderCount;
    main.setAttribute("aria-busy", "true");
    try {
      await readSandboxClock().catch(() => undefined);
      const el = await page.render(ctx, route);
      if (mine !== renderCount || ended) return;
      main.replaceChildren(el);
    } catch (err) {
      if (mine !== renderCount || ended) return;
      main.replaceChildren(
        h("h1", { id: "page-title", tabindex: -1 }, page.title),
        h("div", { class: "error-box", role: "alert" }, err instanceof Error ? err.message : String(err)),
      );
    } finally {
      main.removeAttribute("aria-busy");
    }
    document.title = `${page.title} · ${env.title} · Payments console`;
    announce(`${page.title} loaded`);
  }

  onRoute = () => void render();
  window.addEventListener("hashchange", onRoute);
  ticker = window.setInterval(() => tickTimes(), 15_000);
  void render();
}

function stop(): void {
  if (onRoute) window.removeEventListener("hashchange", onRoute);
  onRoute = undefined;
  if (ticker !== undefined) window.clearInterval(ticker);
  for (const dialog of document.querySelectorAll("dialog")) dialog.remove();
}

currentSession().then(
  (session) => (session ? start(session) : signInView()),
  (err: unknown) => signInView(err instanceof Error ? err.message : String(err)),
);
