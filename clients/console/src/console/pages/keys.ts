import type { ServiceKey } from "@payments/client";
import { SCOPES } from "@payments/contract/operations";
import { need } from "../api.ts";
import { type Ctx, type PageDef, pageHeader, type Route, serverTime } from "../app.ts";
import { truncatedPrefix } from "../format.ts";
import { listView } from "../list.ts";
import { announce, badge, button, confirmDialog, field, formDialog, h, select } from "../ui.ts";

// Service keys (ServiceKey: name, truncated prefix starting `key_`, scopes, how long ago each was last
// used, a rotate action), through listServiceKeys, createServiceKey, rotateServiceKey and
// revokeServiceKey (scope `*`).

const GRACE_PERIODS: [string, string][] = [
  ["0", "None: the old secret stops working now"],
  ["3600", "1 hour"],
  ["86400", "24 hours"],
  ["604800", "7 days"],
  ["2592000", "30 days"],
];

function keyStatus(k: ServiceKey): HTMLElement {
  if (k.revoked_at) return badge("revoked", "bad");
  if (k.expires_at && Date.parse(k.expires_at) <= Date.now()) return badge("expired", "bad");
  return badge("active", "ok");
}

const active = (k: ServiceKey) => !k.revoked_at && !(k.expires_at && Date.parse(k.expires_at) <= Date.now());

function createKey(ctx: Ctx): void {
  const name = h("input", { name: "name", required: true, maxlength: 100, autocomplete: "off" });
  const scopeBoxes = SCOPES.map((scope) =>
    h(
      "label",
      { class: "check" },
      h("input", { type: "checkbox", name: "scopes", value: scope }),
      scope === "*" ? "* (everything, including keys)" : scope,
    ),
  );
  const expires = h("input", { name: "expires_at", type: "datetime-local" });
  formDialog("Create a service key", {
    body: [
      field("Name", name, "A label for people: what or who uses the key."),
      h("fieldset", null, h("legend", null, "Scopes"), h("div", { class: "checks" }, scopeBoxes)),
      field("Expires (optional, your local time)", expires),
    ],
    submitLabel: "Create key",
    async submit(close) {
      const scopes = scopeBoxes
        .map((l) => l.querySelector("input"))
        .filter((i) => i?.checked)
        .map((i) => i?.value ?? "");
      if (scopes.length === 0) return "Choose at least one scope.";
      const created = need(
        await ctx.api.POST("/v1/service_keys", {
          body: {
            name: name.value.trim(),
            scopes: scopes as ServiceKey["scopes"],
            ...(expires.value ? { expires_at: new Date(expires.value).toISOString() } : {}),
          },
        }),
      );
      close();
      await ctx.showSecret(`Key "${created.name}" created`, created.secret, "From now on only its prefix is listed.");
      ctx.refresh();
      return undefined;
    },
  });
}

function rotateKey(ctx: Ctx, key: ServiceKey): void {
  const grace = select("grace_period_seconds", GRACE_PERIODS, "86400");
  const own = key.id === ctx.session.key.id;
  formDialog(`Rotate "${key.name}"`, {
    body: [
      h(
        "p",
        null,
        "A new secret is issued. The old one keeps working for the grace period you choose, so you can deploy the new one first.",
      ),
      own
        ? h(
            "p",
            { class: "warn-text" },
            "This is the key you are signed in with: when its old secret stops working, sign in again with the new one.",
          )
        : null,
      field("Grace period for the old secret", grace),
    ],
    submitLabel: "Rotate key",
    async submit(close) {
      const rotated = need(
        await ctx.api.POST("/v1/service_keys/{id}/rotate", {
          params: { path: { id: key.id } },
          body: { grace_period_seconds: Number(grace.value) },
        }),
      );
      close();
      await ctx.showSecret(
        `Key "${rotated.name}" rotated`,
        rotated.secret,
        grace.value === "0"
          ? "The old secret no longer works."
          : `The old secret keeps working for ${grace.selectedOptions[0]?.textContent ?? "the grace period"}.`,
      );
      ctx.refresh();
      return undefined;
    },
  });
}

async function revokeKey(ctx: Ctx, key: ServiceKey): Promise<void> {
  const own = key.id === ctx.session.key.id;
  const ok = await confirmDialog(
    `Revoke "${key.name}"?`,
    [
      h(
        "p",
        null,
        `Requests with ${truncatedPrefix(key.prefix)} are refused from now on, including a secret still in a rotation's grace period. This cannot be undone.`,
      ),
      own ? h("p", { class: "warn-text" }, "This is the key you are signed in with: you will be signed out.") : null,
    ],
    "Revoke key",
  );
  if (!ok) return;
  try {
    need(await ctx.api.POST("/v1/service_keys/{id}/revoke", { params: { path: { id: key.id } } }));
    announce(`Key ${key.name} revoked`);
    ctx.refresh();
  } catch (error) {
    announce(error instanceof Error ? error.message : String(error));
  }
}

export const keysPage: PageDef = {
  path: "keys",
  title: "Service keys",
  needs: ["listServiceKeys"],
  render(ctx: Ctx, route: Route) {
    const list = listView<ServiceKey>({
      caption: "Service keys",
      query: route.query,
      navigate: (q) => ctx.go("keys", q),
      empty: "No keys.",
      load: async (q) => need(await ctx.api.GET("/v1/service_keys", { params: { query: q } })),
      columns: [
        {
          header: "Name",
          rowHeader: true,
          cell: (k) => [k.name, k.id === ctx.session.key.id ? h("span", { class: "muted" }, " (you)") : null],
        },
        { header: "Key", cell: (k) => h("code", null, truncatedPrefix(k.prefix)) },
        {
          header: "Scopes",
          cell: (k) =>
            h(
              "span",
              { class: "scopes" },
              k.scopes.map((s) => h("code", null, s)),
            ),
        },
        { header: "Last used", cell: (k) => serverTime(k.last_used_at) },
        { header: "Created", cell: (k) => serverTime(k.created_at) },
        { header: "Expires", cell: (k) => serverTime(k.expires_at) },
        { header: "Status", cell: keyStatus },
        {
          header: "Actions",
          cell: (k) =>
            active(k)
              ? h(
                  "div",
                  { class: "row-actions" },
                  ctx.can("rotateServiceKey")
                    ? h(
                        "button",
                        {
                          type: "button",
                          class: "btn",
                          "aria-label": `Rotate ${k.name}`,
                          onclick: () => rotateKey(ctx, k),
                        },
                        "Rotate",
                      )
                    : null,
                  ctx.can("revokeServiceKey")
                    ? h(
                        "button",
                        {
                          type: "button",
                          class: "btn danger",
                          "aria-label": `Revoke ${k.name}`,
                          onclick: () => revokeKey(ctx, k),
                        },
                        "Revoke",
                      )
                    : null,
                )
              : h("span", { class: "muted" }, "—"),
        },
      ],
    });
    return h(
      "div",
      null,
      pageHeader(
        "Service keys",
        ctx.can("createServiceKey") ? button("Create key", () => createKey(ctx), "primary") : null,
      ),
      h(
        "p",
        { class: "muted" },
        "Secrets are shown once, when a key is created or rotated; the server keeps only their SHA-256 digests. Last use may lag by up to a minute.",
      ),
      list,
    );
  },
};
