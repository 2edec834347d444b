import type { components } from "@payments/client";
import { need } from "../api.ts";
import { amount, type Ctx, link, type PageDef, pageHeader, type Route, time } from "../app.ts";
import { listView } from "../list.ts";
import {
  announce,
  badge,
  button,
  confirmDialog,
  details,
  errorBox,
  field,
  formDialog,
  h,
  select,
  showFormError,
} from "../ui.ts";

// Fraud (scope `fraud`): evaluations with the rules that fired, value lists and their items, and the
// environment's thresholds.

type Evaluation = components["schemas"]["FraudEvaluation"];
type FraudList = components["schemas"]["FraudList"];
type FraudListItem = components["schemas"]["FraudListItem"];

const KINDS: [string, string][] = [
  "card_bin",
  "card_fingerprint",
  "ip_address",
  "email",
  "email_domain",
  "country",
].map((k) => [k, k]);
const ACTIONS: [string, string][] = [
  ["block", "block: decide block"],
  ["flag", "flag: add risk points"],
  ["allow", "allow: decide allow"],
];

const decisionBadge = (d: string) =>
  badge(d.replace("_", " "), d === "allow" ? "ok" : d === "review" || d === "request_3ds" ? "warn" : "bad");

function subnav(current: string): HTMLElement {
  const item = (path: string, label: string) =>
    h("li", null, h("a", { href: `#/${path}`, "aria-current": current === path ? "page" : null }, label));
  return h(
    "nav",
    { class: "subnav", "aria-label": "Fraud" },
    h("ul", null, item("fraud", "Evaluations"), item("fraud/lists", "Value lists"), item("fraud/settings", "Settings")),
  );
}

function evaluations(ctx: Ctx, route: Route): HTMLElement {
  return listView<Evaluation>({
    caption: "Fraud evaluations",
    query: route.query,
    navigate: (q) => ctx.go("fraud", q),
    empty: "No evaluations match.",
    filters: [
      {
        name: "decision",
        label: "Decision",
        options: [
          ["allow", "allow"],
          ["review", "review"],
          ["request_3ds", "request 3-D Secure"],
          ["block", "block"],
        ],
      },
      { name: "tx_id", label: "Transaction id", placeholder: "tx_…" },
    ],
    load: async (q) => need(await ctx.api.GET("/v1/fraud/evaluations", { params: { query: q as never } })),
    columns: [
      {
        header: "Transaction",
        rowHeader: true,
        cell: (e) =>
          e.source === "facts"
            ? h("code", null, e.tx_id)
            : ctx.can("getCharge")
              ? link(`charges/${e.tx_id}`, e.tx_id)
              : h("code", null, e.tx_id),
      },
      { header: "Amount", cell: (e) => amount(e.amount, e.currency) },
      { header: "Score", cell: (e) => String(e.score) },
      { header: "Decision", cell: (e) => decisionBadge(e.decision) },
      {
        header: "Rules",
        cell: (e) =>
          e.rules.length === 0
            ? h("span", { class: "muted" }, "none fired")
            : h(
                "details",
                null,
                h("summary", null, e.signals.join(", ")),
                h(
                  "ul",
                  null,
                  e.rules.map((r) => h("li", null, h("code", null, r.rule), ` +${r.points}: ${r.reason}`)),
                ),
              ),
      },
      { header: "Created", cell: (e) => time(e.created_at) },
    ],
  });
}

function createList(ctx: Ctx): void {
  const name = h("input", { name: "name", required: true, maxlength: 200, autocomplete: "off", "data-param": "name" });
  const kind = select("kind", KINDS, "email");
  kind.dataset.param = "kind";
  const action = select("action", ACTIONS, "block");
  action.dataset.param = "action";
  formDialog("Create a value list", {
    body: [field("Name", name), field("Kind of values", kind), field("What a match does", action)],
    submitLabel: "Create list",
    async submit(close) {
      const created = need(
        await ctx.api.POST("/v1/fraud/lists", {
          body: {
            name: name.value.trim(),
            kind: kind.value as FraudList["kind"],
            action: action.value as FraudList["action"],
          },
        }),
      );
      close();
      ctx.go(`fraud/lists/${created.id}`);
      return undefined;
    },
  });
}

async function listDetail(ctx: Ctx, route: Route, id: string): Promise<HTMLElement> {
  const list = need(await ctx.api.GET("/v1/fraud/lists/{id}", { params: { path: { id } } }));
  const errors = errorBox();
  errors.show(null);
  const value = h("input", { name: "value", required: true, autocomplete: "off", spellcheck: "false" });
  const addForm = h(
    "form",
    { class: "inline-form", "aria-label": "Add a value" },
    errors.el,
    field(`Value (${list.kind})`, value),
    h("button", { type: "submit", class: "btn primary" }, "Add value"),
  );
  addForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      need(
        await ctx.api.POST("/v1/fraud/lists/{id}/items", {
          params: { path: { id } },
          body: { value: value.value.trim() },
        }),
      );
      announce("Value added");
      ctx.refresh();
    } catch (error) {
      errors.show(error instanceof Error ? error.message : String(error));
    }
  });
  return h(
    "div",
    null,
    subnav("fraud/lists"),
    h("p", { class: "crumbs" }, link("fraud/lists", "Value lists"), " / ", h("code", null, list.id)),
    pageHeader(
      list.name,
      ctx.can("deleteFraudList")
        ? button(
            "Delete list",
            async () => {
              if (
                !(await confirmDialog(
                  "Delete this list?",
                  h("p", null, "Its values stop affecting evaluations at once."),
                  "Delete list",
                ))
              )
                return;
              try {
                need(await ctx.api.DELETE("/v1/fraud/lists/{id}", { params: { path: { id } } }));
                ctx.go("fraud/lists");
              } catch (error) {
                announce(error instanceof Error ? error.message : String(error));
              }
            },
            "danger",
          )
        : null,
    ),
    details([
      ["Kind", h("code", null, list.kind)],
      ["Action", badge(list.action, list.action === "allow" ? "ok" : list.action === "flag" ? "warn" : "bad")],
      ["Values", String(list.item_count)],
    ]),
    ctx.can("createFraudListItem") ? addForm : null,
    listView<FraudListItem>({
      caption: "Values",
      query: route.query,
      navigate: (q) => ctx.go(`fraud/lists/${id}`, q),
      empty: "No values yet.",
      load: async (q) => need(await ctx.api.GET("/v1/fraud/lists/{id}/items", { params: { path: { id }, query: q } })),
      columns: [
        { header: "Value", rowHeader: true, cell: (i) => h("code", null, i.value) },
        { header: "Added", cell: (i) => time(i.created_at) },
        {
          header: "Actions",
          cell: (i) =>
            ctx.can("deleteFraudListItem")
              ? h(
                  "button",
                  {
                    type: "button",
                    class: "btn danger",
                    "aria-label": `Remove ${i.value}`,
                    onclick: async () => {
                      try {
                        need(await ctx.api.DELETE("/v1/fraud/list_items/{id}", { params: { path: { id: i.id } } }));
                        announce("Value removed");
                        ctx.refresh();
                      } catch (error) {
                        announce(error instanceof Error ? error.message : String(error));
                      }
                    },
                  },
                  "Remove",
                )
              : null,
        },
      ],
    }),
  );
}

function lists(ctx: Ctx, route: Route): HTMLElement {
  return h(
    "div",
    null,
    subnav("fraud/lists"),
    pageHeader(
      "Value lists",
      ctx.can("createFraudList") ? button("Create list", () => createList(ctx), "primary") : null,
    ),
    listView<FraudList>({
      caption: "Value lists",
      query: route.query,
      navigate: (q) => ctx.go("fraud/lists", q),
      empty: "No lists match.",
      filters: [{ name: "kind", label: "Kind", options: KINDS }],
      load: async (q) => need(await ctx.api.GET("/v1/fraud/lists", { params: { query: q as never } })),
      columns: [
        { header: "Name", rowHeader: true, cell: (l) => link(`fraud/lists/${l.id}`, l.name) },
        { header: "Kind", cell: (l) => h("code", null, l.kind) },
        { header: "Action", cell: (l) => l.action },
        { header: "Values", cell: (l) => String(l.item_count) },
        { header: "Created", cell: (l) => time(l.created_at) },
      ],
    }),
  );
}

async function settings(ctx: Ctx): Promise<HTMLElement> {
  const current = need(await ctx.api.GET("/v1/fraud/settings"));
  const errors = errorBox();
  errors.show(null);
  // Each control names the body field it sends (data-param), so the API's 400 is shown beside it.
  const number = (name: string, value: number | null, min: number, max: number, required = true) =>
    h("input", {
      name,
      type: "number",
      min,
      max,
      step: 1,
      value: value ?? "",
      required,
      inputmode: "numeric",
      "data-param": name,
    });
  const review = number("review_threshold", current.review_threshold, 1, 100);
  const request3ds = number("request_3ds_threshold", current.request_3ds_threshold ?? null, 1, 100, false);
  const block = number("block_threshold", current.block_threshold, 1, 100);
  const window = number("review_window_seconds", current.review_window_seconds, 60, 2_592_000);
  const form = h(
    "form",
    { class: "settings" },
    errors.el,
    field("Review from score", review),
    field(
      "Request 3-D Secure from score",
      request3ds,
      "Card charges from this score up, and below the block threshold, get a 3-D Secure challenge. Above the review threshold; empty: never.",
    ),
    field("Block from score", block, "Must be above the review threshold."),
    field("Review window (seconds)", window, "An open review left longer is voided."),
    ctx.can("updateFraudSettings") ? h("button", { type: "submit", class: "btn primary" }, "Save settings") : null,
  );
  if (!ctx.can("updateFraudSettings")) for (const input of [review, request3ds, block, window]) input.disabled = true;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    // Only what changed (absent fields keep their value), so a refusal names the field that was changed.
    const body: components["schemas"]["FraudSettingsUpdate"] = {};
    if (Number(review.value) !== current.review_threshold) body.review_threshold = Number(review.value);
    if (Number(block.value) !== current.block_threshold) body.block_threshold = Number(block.value);
    if (Number(window.value) !== current.review_window_seconds) body.review_window_seconds = Number(window.value);
    const threshold = request3ds.value.trim() === "" ? null : Number(request3ds.value);
    if (threshold !== (current.request_3ds_threshold ?? null)) body.request_3ds_threshold = threshold;
    try {
      need(await ctx.api.PATCH("/v1/fraud/settings", { body }));
      announce("Settings saved");
      ctx.refresh();
    } catch (error) {
      showFormError(form, errors, error);
    }
  });
  return h(
    "div",
    null,
    subnav("fraud/settings"),
    pageHeader("Fraud settings"),
    h("p", { class: "muted" }, "Updated ", time(current.updated_at)),
    form,
  );
}

export const fraudPage: PageDef = {
  path: "fraud",
  title: "Fraud",
  needs: ["listFraudEvaluations", "listFraudLists", "getFraudSettings"],
  render(ctx: Ctx, route: Route) {
    const [, section, id] = route.segments;
    if (section === "lists" && id) return listDetail(ctx, route, id);
    if (section === "lists") return lists(ctx, route);
    if (section === "settings") return settings(ctx);
    return h("div", null, subnav("fraud"), pageHeader("Fraud evaluations"), evaluations(ctx, route));
  },
};
