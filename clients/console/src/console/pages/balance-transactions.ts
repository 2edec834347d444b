import type { components } from "@payments/client";
import { ApiError, need } from "../api.ts";
import { amount, type Ctx, link, type PageDef, pageHeader, type Route, time } from "../app.ts";
import { balanceTransactionQuery, createdRangeProblem, csvFileName } from "../balance-query.ts";
import { money } from "../format.ts";
import { listView } from "../list.ts";
import { announce, badge, button, type Child, details, errorBox, h } from "../ui.ts";
import { merchantNames } from "./merchants.ts";

// Balance transactions (scope `merchants`, issue 30): every movement of a merchant's money, one per
// ledger posting that touches its balance (spec/resources/balance-transactions.tsp). The list takes the
// operation's filters (merchant, type, created range, source, cashout: a cashout's reconciliation), one
// transaction shows where its money came from, and the filtered list downloads as CSV: the same
// operation with `Accept: text/csv`, fetched through the session like every call (no key in an address),
// and handed to the browser as a file.

type BalanceTransaction = components["schemas"]["BalanceTransaction"];

const TYPES: [BalanceTransaction["type"], string][] = [
  ["charge", "charge"],
  ["refund", "refund"],
  ["settlement", "settlement"],
  ["cashout", "cashout"],
  ["cashout_reversal", "cashout reversal"],
  ["dispute", "dispute"],
  ["dispute_reversal", "dispute reversal"],
  ["fee", "fee (a dispute's)"],
  ["adjustment", "adjustment"],
];

export const typeLabel = (t: BalanceTransaction["type"]) => t.replace("_", " ");

function statusBadge(t: Pick<BalanceTransaction, "status">): HTMLElement {
  return badge(t.status, t.status === "available" ? "ok" : "info");
}

/**
 * The object that moved the money, linked to its page where the console has one (charges, cashouts,
 * disputes, another balance transaction) and the key may read it; a refund (`re_…`) shows as its id.
 */
export function sourceCell(ctx: Ctx, source: string): Child {
  const page =
    source.startsWith("tx_") && ctx.can("getCharge")
      ? "charges"
      : source.startsWith("co_") && ctx.can("getCashout")
        ? "cashouts"
        : source.startsWith("dp_") && ctx.can("getDispute")
          ? "disputes"
          : source.startsWith("txn_") && ctx.can("getBalanceTransaction")
            ? "balance-transactions"
            : null;
  return page ? link(`${page}/${source}`, source) : h("code", { class: "id" }, source);
}

/** The amount, and under it the fee and the net when the transaction has a fee. */
function amountCell(t: BalanceTransaction): Child {
  if (t.fee === 0) return amount(t.amount, t.currency);
  return h(
    "span",
    { class: "named" },
    amount(t.amount, t.currency),
    h("span", { class: "muted nowrap" }, `fee ${money(t.fee, t.currency)}`),
    h("span", { class: "muted nowrap" }, `net ${money(t.net, t.currency)}`),
  );
}

function cashoutCell(ctx: Ctx, cashoutId: string | null): Child {
  if (!cashoutId) return h("span", { class: "muted" }, "none yet");
  return ctx.can("getCashout") ? link(`cashouts/${cashoutId}`, cashoutId) : h("code", { class: "id" }, cashoutId);
}

/**
 * Fetches the filtered list as CSV through the session (the server streams it) and hands it to the
 * browser as a file. The API answers a refused request with a problem, shown in `box`.
 */
async function downloadCsv(ctx: Ctx, address: Record<string, string>, box: ReturnType<typeof errorBox>) {
  box.show(null);
  const problem = createdRangeProblem(address.created_from, address.created_to);
  if (problem) return box.show(problem);
  announce("Preparing the CSV…");
  try {
    const result = await ctx.api.GET("/v1/balance_transactions", {
      params: { query: balanceTransactionQuery(address, { csv: true }) as never },
      headers: { Accept: "text/csv" },
      parseAs: "blob",
    });
    const blob = need(result as { data?: Blob; error?: unknown; response: Response });
    const url = URL.createObjectURL(new Blob([blob], { type: "text/csv" }));
    const save = h("a", { href: url, download: csvFileName(address, new Date().toISOString().slice(0, 10)) });
    save.hidden = true;
    document.body.append(save);
    save.click();
    save.remove();
    // The download has its own copy once started; the address is freed after the click's task.
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    announce("CSV downloaded");
  } catch (error) {
    box.show(error instanceof ApiError ? error.message : `The CSV could not be downloaded: ${String(error)}`);
  }
}

async function transactionDetail(ctx: Ctx, id: string): Promise<HTMLElement> {
  const t = need(await ctx.api.GET("/v1/balance_transactions/{id}", { params: { path: { id } } }));
  const merchants = merchantNames(ctx);
  await merchants.load([t.merchant_id]);
  return h(
    "div",
    null,
    h("p", { class: "crumbs" }, link("balance-transactions", "Balance transactions"), " / ", h("code", null, t.id)),
    pageHeader(`${typeLabel(t.type)} · ${money(t.amount, t.currency)}`),
    details([
      ["Id", h("code", null, t.id)],
      ["Type", typeLabel(t.type)],
      ["Amount", amount(t.amount, t.currency)],
      ["Fee", amount(t.fee, t.currency)],
      ["Net", amount(t.net, t.currency)],
      ["Status", statusBadge(t)],
      ["Available on", time(t.available_on)],
      ["Source", sourceCell(ctx, t.source)],
      ["Cashout", cashoutCell(ctx, t.cashout_id)],
      ["Merchant", merchants.cell(t.merchant_id)],
      ["Created", time(t.created_at)],
      ["Related", link("balance-transactions", "Every balance transaction of this source", { source: t.source })],
    ]),
  );
}

export const balanceTransactionsPage: PageDef = {
  path: "balance-transactions",
  title: "Balance transactions",
  needs: ["listBalanceTransactions"],
  render(ctx: Ctx, route: Route) {
    const id = route.segments[1];
    if (id) return transactionDetail(ctx, id);
    const merchants = merchantNames(ctx);
    const address: Record<string, string> = {};
    for (const [k, v] of route.query) if (v !== "") address[k] = v;
    const csvError = errorBox();
    csvError.show(null);
    const cashout = address.cashout_id;
    return h(
      "div",
      null,
      pageHeader(
        cashout ? "Reconciliation of a cashout" : "Balance transactions",
        button("Download CSV", (event) => {
          // One download at a time: a second click while the server streams the first would fetch it twice.
          // Not `disabled`, which would drop the keyboard's focus from the button.
          const self = event.currentTarget as HTMLButtonElement;
          if (self.getAttribute("aria-busy") === "true") return;
          self.setAttribute("aria-busy", "true");
          void downloadCsv(ctx, address, csvError).finally(() => self.removeAttribute("aria-busy"));
        }),
      ),
      h(
        "p",
        { class: "muted" },
        cashout
          ? [
              "The balance transactions cashout ",
              cashoutCell(ctx, cashout),
              " paid out: their net adds up to its amount.",
            ]
          : "Every movement of a merchant's money: captures and their fees, refunds, settlements, cashouts, disputes. Download CSV gives every transaction the filters match, not only this page.",
      ),
      csvError.el,
      listView<BalanceTransaction>({
        caption: "Balance transactions",
        query: route.query,
        navigate: (q) => ctx.go("balance-transactions", q),
        empty: "No balance transactions match.",
        filters: [
          { name: "merchant_id", label: "Merchant id", placeholder: "mch_…" },
          { name: "type", label: "Type", options: TYPES },
          { name: "created_from", label: "Created from (UTC day)", type: "date" },
          { name: "created_to", label: "Created to (UTC day, included)", type: "date" },
          { name: "source", label: "Source id", placeholder: "tx_…, re_…, co_…, dp_…" },
          { name: "cashout_id", label: "Cashout id", placeholder: "co_…" },
        ],
        load: async (q) => {
          const problem = createdRangeProblem(q.created_from, q.created_to);
          if (problem) throw new Error(problem);
          const page = need(
            await ctx.api.GET("/v1/balance_transactions", { params: { query: balanceTransactionQuery(q) as never } }),
          );
          // The operation also answers text/csv; without `Accept: text/csv` it is the JSON list.
          if (typeof page === "string") throw new Error("The server answered with CSV where a list was asked for.");
          await merchants.load(page.data.map((t) => t.merchant_id));
          return page;
        },
        // Narrow enough for a laptop's 1024 px with two ids and a merchant: the creation time under the id,
        // the status under the type, and the fee and net under the amount when there is a fee (without one
        // the net is the amount). The CSV and a transaction's page have each apart.
        columns: [
          {
            header: "Transaction",
            rowHeader: true,
            cell: (t) =>
              h(
                "span",
                { class: "named" },
                link(`balance-transactions/${t.id}`, t.id),
                h("span", null, time(t.created_at)),
              ),
          },
          { header: "Type", cell: (t) => h("span", { class: "named" }, typeLabel(t.type), statusBadge(t)) },
          { header: "Amount", cell: amountCell },
          { header: "Source", cell: (t) => sourceCell(ctx, t.source) },
          { header: "Merchant", cell: (t) => merchants.cell(t.merchant_id) },
        ],
      }),
    );
  },
};
