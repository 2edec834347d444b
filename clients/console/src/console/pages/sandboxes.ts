import type { components } from "@payments/client";
import { need } from "../api.ts";
import { act, type Ctx, type PageDef, pageHeader, type Route, serverTime } from "../app.ts";
import { erasureText, sandboxesUnavailable } from "../environment.ts";
import { truncatedPrefix } from "../format.ts";
import { listView } from "../list.ts";
import { button, confirmDialog, field, formDialog, h, keyInput } from "../ui.ts";

// Sandboxes on demand (spec/resources/sandboxes.tsp, scope `*` on a key of the account): the list,
// create (the new sandbox's first `*` key shown once), delete (saying what it erases), and open (a new
// sign-in with a sandbox's key: this browser has one session, so it replaces the current one). A session
// that cannot manage sandboxes (a key without `*`, or a session inside a sandbox on demand, whose keys
// get 403) sees why instead (environment.ts sandboxesUnavailable).

type IsolatedSandbox = components["schemas"]["IsolatedSandbox"];

/** What "open" does to this session, said before it is done. */
function openingNote(ctx: Ctx, sandbox: { id: string; name: string }): HTMLElement {
  return h(
    "p",
    null,
    `Opening signs this browser out of the current session (key “${ctx.session.key.name}”, ${truncatedPrefix(ctx.session.key.prefix)}) and signs it in to the sandbox “${sandbox.name}” (${sandbox.id}) with the sandbox's key: the console then shows that sandbox's data only. To come back here, sign in again with your own key. To keep both open, use a private window for one of them.`,
  );
}

/** "Open" from the list: the sandbox's key is pasted (it was shown once, at creation). */
function openSandbox(ctx: Ctx, sandbox: IsolatedSandbox): void {
  const key = keyInput();
  formDialog(`Open the sandbox “${sandbox.name}”`, {
    body: [
      openingNote(ctx, sandbox),
      field(
        "The sandbox's key",
        key,
        "A key_test_… secret of this sandbox (its first key was shown when it was created).",
      ),
    ],
    submitLabel: "Sign in to the sandbox",
    submit(close) {
      const secret = key.value.trim();
      if (!secret.startsWith("key_test_")) return "A sandbox's key starts with key_test_.";
      key.value = "";
      close();
      void ctx.signInWith(secret);
      return undefined;
    },
  });
}

function createSandbox(ctx: Ctx): void {
  const name = h("input", { name: "name", required: true, maxlength: 100, autocomplete: "off" });
  formDialog("Create a sandbox", {
    body: [
      h(
        "p",
        null,
        "A new sandbox starts empty, with its own objects, keys, events, webhook endpoints and clock; nothing in it is visible from any other sandbox or from this one. Its first key (scope *) is shown once.",
      ),
      field("Name", name, "A label for people: “CI job 4512”, “QA: Ana”."),
    ],
    submitLabel: "Create sandbox",
    async submit(close) {
      const made = need(await ctx.api.POST("/v1/sandboxes", { body: { name: name.value.trim() } }));
      close();
      const secret = made.key.secret;
      ctx.refresh();
      await ctx.showSecret(
        `Sandbox “${made.name}” created`,
        secret,
        `This is its first key (scope *): the only way into the sandbox ${made.id} until you make more keys inside it.`,
        {
          label: "Open the sandbox",
          run: async () => {
            const ok = await confirmDialog(
              `Open the sandbox “${made.name}”?`,
              openingNote(ctx, made),
              "Sign in to the sandbox",
            );
            if (ok) await ctx.signInWith(secret);
          },
        },
      );
      return undefined;
    },
  });
}

async function deleteSandbox(ctx: Ctx, pageError: HTMLElement, sandbox: IsolatedSandbox): Promise<void> {
  const ok = await confirmDialog(
    `Delete the sandbox “${sandbox.name}”?`,
    h("p", null, erasureText(sandbox)),
    "Delete sandbox",
  );
  if (!ok) return;
  await act(ctx, pageError, `Sandbox ${sandbox.name} deleted`, async () =>
    need(await ctx.api.DELETE("/v1/sandboxes/{id}", { params: { path: { id: sandbox.id } } })),
  );
}

export const sandboxesPage: PageDef = {
  path: "sandboxes",
  title: "Sandboxes",
  needs: ["listSandboxes"],
  explainsWhenUnavailable: true,
  render(ctx: Ctx, route: Route) {
    const unavailable = sandboxesUnavailable(ctx.session);
    if (unavailable !== null) {
      return h(
        "div",
        null,
        pageHeader("Sandboxes"),
        h("p", { class: "warn-text", role: "note", id: "sandboxes-unavailable" }, unavailable),
      );
    }
    const pageError = h("div", { class: "error-box", role: "alert", hidden: true });
    const list = listView<IsolatedSandbox>({
      caption: "Sandboxes",
      query: route.query,
      navigate: (q) => ctx.go("sandboxes", q),
      empty: "No sandboxes yet. Create one for a CI job or a tester: it starts empty and sees nothing of the others.",
      load: async (q) => need(await ctx.api.GET("/v1/sandboxes", { params: { query: q } })),
      columns: [
        { header: "Name", rowHeader: true, cell: (s) => s.name },
        { header: "Id", cell: (s) => h("code", null, s.id) },
        // The account's record, on the server's own clock (no sandbox clock moves it).
        { header: "Created", cell: (s) => serverTime(s.created_at) },
        {
          header: "Actions",
          cell: (s) =>
            h(
              "div",
              { class: "row-actions" },
              h(
                "button",
                { type: "button", class: "btn", "aria-label": `Open ${s.name}`, onclick: () => openSandbox(ctx, s) },
                "Open",
              ),
              ctx.can("deleteSandbox")
                ? h(
                    "button",
                    {
                      type: "button",
                      class: "btn danger",
                      "aria-label": `Delete ${s.name}`,
                      onclick: () => void deleteSandbox(ctx, pageError, s),
                    },
                    "Delete",
                  )
                : null,
            ),
        },
      ],
    });
    return h(
      "div",
      null,
      pageHeader(
        "Sandboxes",
        ctx.can("createSandbox") ? button("Create sandbox", () => createSandbox(ctx), "primary") : null,
      ),
      h(
        "p",
        { class: "muted" },
        "Isolated sandboxes on demand: each has its own objects, keys, events, webhook endpoints and clock, and sees nothing of the others or of this environment. A sandbox's keys are key_test_ keys; the console opens a sandbox by signing in with one.",
      ),
      pageError,
      list,
    );
  },
};
