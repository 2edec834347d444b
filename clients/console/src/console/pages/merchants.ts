import type { components } from "@payments/client";
import { need } from "../api.ts";
import { amount, type Ctx, link, type PageDef, pageHeader, type Route, time } from "../app.ts";
import { listView, table } from "../list.ts";
import { announce, badge, button, type Child, details, field, formDialog, h, newUid, select } from "../ui.ts";

// Merchants and their balances (scope `merchants`): list filtered by status, create, rename, change
// status (active ⇄ suspended, or closed for good), and the balance per currency.

type Merchant = components["schemas"]["Merchant"];
type CurrencyBalance = components["schemas"]["CurrencyBalance"];

const statusBadge = (m: Merchant) =>
  badge(m.status, m.status === "active" ? "ok" : m.status === "suspended" ? "warn" : "bad");

/**
 * Merchants by name where people look for them (the charges, payment links and cashouts lists and
 * pages), each with its id beside it, which stays what filters and the API take. `load` learns the
 * names of a page's merchants, the newest hundred in one request and any other one by one, as far as
 * the key's scopes allow; `cell` shows one: its name linking to its page, and its id; the id alone for
 * a key that may not read merchants.
 */
export function merchantNames(ctx: Ctx): { load(ids: string[]): Promise<void>; cell(id: string): Child } {
  const names = new Map<string, string>();
  return {
    async load(ids) {
      const wanted = () => [...new Set(ids)].filter((id) => !names.has(id));
      if (wanted().length === 0) return;
      if (ctx.can("listMerchants")) {
        const { data } = await ctx.api.GET("/v1/merchants", { params: { query: { limit: 100 } } });
        for (const m of data?.data ?? []) names.set(m.id, m.name);
      }
      if (!ctx.can("getMerchant")) return;
      // A few at a time: a page names at most its 20 rows' merchants, well within a key's rate limit.
      const rest = wanted();
      for (let i = 0; i < rest.length; i += 4) {
        await Promise.all(
          rest.slice(i, i + 4).map(async (id) => {
            const { data } = await ctx.api.GET("/v1/merchants/{id}", { params: { path: { id } } });
            if (data) names.set(id, data.name);
          }),
        );
      }
    },
    cell(id) {
      const name = names.get(id);
      const code = h("code", { class: "id" }, id);
      if (!ctx.can("getMerchant") || name === undefined)
        return ctx.can("getMerchant") ? link(`merchants/${id}`, id) : code;
      return h("span", { class: "named" }, link(`merchants/${id}`, name), code);
    },
  };
}

/**
 * The merchant field of a form (cashouts, payment links): the merchant's id, with the active merchants
 * offered as suggestions when the key may list them (a key without `merchants` types the id).
 */
export function merchantField(ctx: Ctx, selected = "", hint?: string): { el: HTMLElement; input: HTMLInputElement } {
  const input = h("input", {
    name: "merchant_id",
    required: true,
    pattern: "mch_[0-9A-Za-z]{24}",
    placeholder: "mch_…",
    value: selected,
    autocomplete: "off",
    spellcheck: "false",
    "data-param": "merchant_id",
  });
  const el = field("Merchant id", input, hint);
  if (ctx.can("listMerchants")) {
    const list = h("datalist", { id: newUid("merchants") });
    input.setAttribute("list", list.id);
    el.append(list);
    void ctx.api.GET("/v1/merchants", { params: { query: { status: "active", limit: 100 } } }).then(({ data }) => {
      for (const m of data?.data ?? []) list.append(h("option", { value: m.id }, m.name));
    });
  }
  return { el, input };
}

function merchantForm(ctx: Ctx, merchant: Merchant | null): void {
  const name = h("input", {
    name: "name",
    required: true,
    maxlength: 200,
    value: merchant?.name ?? "",
    autocomplete: "off",
    "data-param": "name",
  });
  const status = select(
    "status",
    merchant?.status === "closed"
      ? [["closed", "Closed (final)"]]
      : [
          ["active", "Active: can take payments"],
          ["suspended", "Suspended: cannot take payments"],
          ...(merchant ? ([["closed", "Closed: final, cannot be undone"]] as [string, string][]) : []),
        ],
    merchant?.status ?? "active",
  );
  status.dataset.param = "status";
  formDialog(merchant ? `Edit ${merchant.name}` : "Create a merchant", {
    body: [field("Name", name), field("Status", status)],
    submitLabel: merchant ? "Save" : "Create merchant",
    async submit(close) {
      const body = { name: name.value.trim(), status: status.value as Merchant["status"] };
      if (merchant) {
        need(await ctx.api.PATCH("/v1/merchants/{id}", { params: { path: { id: merchant.id } }, body }));
        close();
        announce("Merchant saved");
        ctx.refresh();
      } else {
        // The create form offers no `closed` (MerchantCreate.status is `active` or `suspended`).
        const initial = body.status === "closed" ? undefined : body.status;
        const created = need(await ctx.api.POST("/v1/merchants", { body: { name: body.name, status: initial } }));
        close();
        ctx.go(`merchants/${created.id}`);
      }
      return undefined;
    },
  });
}

async function merchantDetail(ctx: Ctx, id: string): Promise<HTMLElement> {
  const m = need(await ctx.api.GET("/v1/merchants/{id}", { params: { path: { id } } }));
  const balance = ctx.can("getMerchantBalance")
    ? need(await ctx.api.GET("/v1/merchants/{id}/balance", { params: { path: { id } } }))
    : null;
  return h(
    "div",
    null,
    h("p", { class: "crumbs" }, link("merchants", "Merchants"), " / ", h("code", null, m.id)),
    pageHeader(m.name, ctx.can("updateMerchant") ? button("Edit", () => merchantForm(ctx, m)) : null),
    details([
      ["Id", h("code", null, m.id)],
      ["Status", statusBadge(m)],
      [
        "Metadata",
        Object.keys(m.metadata).length
          ? h("code", null, JSON.stringify(m.metadata))
          : h("span", { class: "muted" }, "none"),
      ],
      ["Created", time(m.created_at)],
      ["Updated", time(m.updated_at)],
      [
        "Charges",
        ctx.can("listCharges")
          ? link("charges", "This merchant's charges", { merchant_id: m.id })
          : h("span", { class: "muted" }, "not in this key's scopes"),
      ],
      ...(ctx.can("listPaymentLinks")
        ? ([["Payment links", link("payment-links", "This merchant's payment links", { merchant_id: m.id })]] as [
            string,
            HTMLElement,
          ][])
        : []),
      ...(ctx.can("listBalanceTransactions")
        ? ([
            [
              "Balance transactions",
              link("balance-transactions", "This merchant's balance transactions", { merchant_id: m.id }),
            ],
          ] as [string, HTMLElement][])
        : []),
      ...(ctx.can("listCashouts")
        ? ([["Cashouts", link("cashouts", "This merchant's cashouts", { merchant_id: m.id })]] as [
            string,
            HTMLElement,
          ][])
        : []),
    ]),
    balance
      ? [
          h("h2", null, "Balance"),
          balance.balances.length === 0
            ? h("p", { class: "muted" }, "No money has moved yet.")
            : table<CurrencyBalance>(
                "Balance per currency",
                [
                  { header: "Currency", rowHeader: true, cell: (b) => b.currency },
                  { header: "Available", cell: (b) => amount(b.available, b.currency) },
                  { header: "Pending", cell: (b) => amount(b.pending, b.currency) },
                  // What chargebacks took beyond the available balance (CurrencyBalance.owed), when anything is owed.
                  ...(balance.balances.some((b) => b.owed)
                    ? [{ header: "Owed", cell: (b: CurrencyBalance) => amount(b.owed ?? 0, b.currency) }]
                    : []),
                ],
                balance.balances,
              ),
        ]
      : null,
  );
}

export const merchantsPage: PageDef = {
  path: "merchants",
  title: "Merchants",
  needs: ["listMerchants"],
  render(ctx: Ctx, route: Route) {
    const id = route.segments[1];
    if (id) return merchantDetail(ctx, id);
    return h(
      "div",
      null,
      pageHeader(
        "Merchants",
        ctx.can("createMerchant") ? button("Create merchant", () => merchantForm(ctx, null), "primary") : null,
      ),
      listView<Merchant>({
        caption: "Merchants",
        query: route.query,
        navigate: (q) => ctx.go("merchants", q),
        empty: "No merchants match.",
        filters: [
          {
            name: "status",
            label: "Status",
            options: [
              ["active", "active"],
              ["suspended", "suspended"],
              ["closed", "closed"],
            ],
          },
        ],
        load: async (q) => need(await ctx.api.GET("/v1/merchants", { params: { query: q as never } })),
        columns: [
          { header: "Name", rowHeader: true, cell: (m) => link(`merchants/${m.id}`, m.name) },
          { header: "Id", cell: (m) => h("code", null, m.id) },
          { header: "Status", cell: statusBadge },
          { header: "Created", cell: (m) => time(m.created_at) },
        ],
      }),
    );
  },
};
