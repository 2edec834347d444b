import type { components } from "@payments/client";
import { need } from "../api.ts";
import { act, amount, type Ctx, link, type PageDef, pageHeader, type Route, time } from "../app.ts";
import { money } from "../format.ts";
import { listView, table } from "../list.ts";
import {
  announce,
  badge,
  button,
  type Child,
  clearFieldErrors,
  confirmDialog,
  details,
  errorBox,
  field,
  h,
  showFormError,
} from "../ui.ts";
import { typeLabel } from "./balance-transactions.ts";
import { merchantNames } from "./merchants.ts";

// Disputes (scope `charges`, issue 31; spec/resources/disputes.tsp): the list, filtered by charge,
// merchant and status; one dispute with its amount, reason, status, deadline (on the sandbox clock in the
// sandbox, as every sandbox time: app.ts `time`) and the balance transactions it made; while it needs a
// response, the evidence form (updateDispute: save a draft, or submit) and accepting it (closeDispute,
// after a confirmation). In the sandbox, deciding it as the card network would (sandboxResolveDispute).

type Dispute = components["schemas"]["Dispute"];
type DisputeStatus = Dispute["status"];
type Evidence = components["schemas"]["DisputeEvidenceInput"];
type BalanceTransaction = components["schemas"]["BalanceTransaction"];

const STATUSES: [DisputeStatus, string][] = [
  ["needs_response", "needs response"],
  ["under_review", "under review"],
  ["won", "won"],
  ["lost", "lost"],
  ["warning_needs_response", "inquiry: needs response"],
  ["warning_under_review", "inquiry: under review"],
  ["warning_closed", "inquiry: closed"],
];

/** The statuses updateDispute and closeDispute accept (DisputeStatus: a dispute that needs a response). */
const NEEDS_RESPONSE: DisputeStatus[] = ["needs_response", "warning_needs_response"];
const CLOSED: DisputeStatus[] = ["won", "lost", "warning_closed"];
const isInquiry = (d: Pick<Dispute, "status">) => d.status.startsWith("warning_");

const statusText = (s: DisputeStatus) => STATUSES.find(([v]) => v === s)?.[1] ?? s;

export function disputeStatus(d: Pick<Dispute, "status">): HTMLElement {
  const tone =
    d.status === "won" || d.status === "warning_closed"
      ? "ok"
      : d.status === "lost"
        ? "bad"
        : NEEDS_RESPONSE.includes(d.status)
          ? "warn"
          : "info";
  return badge(statusText(d.status), tone);
}

const reasonText = (r: Dispute["reason"]) => r.replaceAll("_", " ");

/**
 * The evidence fields of the contract (DisputeEvidenceInput), in the order a merchant fills them in:
 * its label, whether it is long text (a textarea) and its most characters.
 */
const EVIDENCE: { name: keyof Evidence; label: string; long: boolean; max: number; hint?: string }[] = [
  { name: "customer_name", label: "Customer name", long: false, max: 500 },
  { name: "customer_email_address", label: "Customer e-mail address", long: false, max: 500 },
  {
    name: "product_description",
    label: "Product description",
    long: true,
    max: 20_000,
    hint: "What was sold, and when and how it was delivered.",
  },
  { name: "shipping_carrier", label: "Shipping carrier", long: false, max: 500 },
  { name: "shipping_tracking_number", label: "Shipping tracking number", long: false, max: 500 },
  {
    name: "refund_policy",
    label: "Refund policy",
    long: true,
    max: 20_000,
    hint: "The policy the customer was shown, and how.",
  },
  {
    name: "cancellation_policy",
    label: "Cancellation policy",
    long: true,
    max: 20_000,
    hint: "The policy the customer was shown, and how.",
  },
  {
    name: "uncategorized_text",
    label: "Anything else",
    long: true,
    max: 20_000,
    hint: "Anything else the cardholder's bank should read.",
  },
];

function disputeActions(ctx: Ctx, d: Dispute, pageError: HTMLElement): HTMLElement {
  const path = { params: { path: { id: d.id } } };
  const actions: Child[] = [];
  if (NEEDS_RESPONSE.includes(d.status) && ctx.can("closeDispute")) {
    actions.push(
      button(
        "Accept the dispute",
        async () => {
          const ok = await confirmDialog(
            "Accept this dispute?",
            isInquiry(d)
              ? h("p", null, "The inquiry is closed without a response. This cannot be undone.")
              : h(
                  "p",
                  null,
                  `The dispute is lost: ${money(d.amount, d.currency)} and the dispute fee of ${money(d.fee, d.currency)} stay taken from the merchant's balance. This cannot be undone.`,
                ),
            "Accept the dispute",
          );
          if (ok)
            await act(ctx, pageError, isInquiry(d) ? "Inquiry closed" : "Dispute accepted: lost", async () =>
              need(await ctx.api.POST("/v1/disputes/{id}/close", path)),
            );
        },
        "danger",
      ),
    );
  }
  // The sandbox plays the card network; ctx.can also refuses sandbox operations to a production key.
  if (!d.livemode && !CLOSED.includes(d.status) && ctx.can("sandboxResolveDispute")) {
    const resolve = (outcome: "won" | "lost") =>
      act(ctx, pageError, `Dispute decided: ${outcome}`, async () =>
        need(await ctx.api.POST("/v1/sandbox/disputes/{id}/resolve", { ...path, body: { outcome } })),
      );
    actions.push(
      button(isInquiry(d) ? "Close for the merchant (sandbox)" : "Decide: won (sandbox)", () => resolve("won")),
      button(isInquiry(d) ? "Escalate to a chargeback (sandbox)" : "Decide: lost (sandbox)", () => resolve("lost")),
    );
  }
  return h(
    "div",
    { class: "toolbar", role: "group", "aria-label": "Dispute actions" },
    actions.length > 0 ? actions : h("span", { class: "muted" }, "No action applies to this dispute now."),
  );
}

/** The evidence form: each field of the contract, saved as a draft or submitted (final: after a confirmation). */
function evidenceForm(ctx: Ctx, d: Dispute): HTMLElement {
  const errors = errorBox();
  errors.show(null);
  const controls = EVIDENCE.map((e) => {
    const attrs = {
      name: e.name,
      maxlength: e.max,
      "data-param": `evidence.${e.name}`,
      spellcheck: e.name === "customer_email_address" || e.name === "shipping_tracking_number" ? "false" : null,
      autocomplete: "off",
    };
    const control = e.long
      ? h("textarea", { ...attrs, rows: 3 })
      : h("input", { ...attrs, type: e.name === "customer_email_address" ? "email" : "text" });
    control.value = d.evidence[e.name] ?? "";
    return { ...e, control };
  });
  /** The fields changed from what is stored: the API keeps what is left out. */
  const changes = (): Evidence => {
    const body: Evidence = {};
    for (const c of controls) {
      const value = c.control.value.trim();
      if (value !== (d.evidence[c.name] ?? "")) body[c.name] = value;
    }
    return body;
  };
  const send = async (submit: boolean) => {
    clearFieldErrors(form);
    errors.show(null);
    try {
      need(
        await ctx.api.POST("/v1/disputes/{id}", {
          params: { path: { id: d.id } },
          body: { evidence: changes(), ...(submit ? { submit: true } : {}) },
        }),
      );
      announce(submit ? "Evidence submitted" : "Evidence saved as a draft");
      ctx.refresh();
    } catch (error) {
      showFormError(form, errors, error);
    }
  };
  const form = h(
    "form",
    { class: "evidence", "aria-labelledby": "evidence-title" },
    errors.el,
    controls.map((c) => field(c.label, c.control, c.hint)),
    h(
      "div",
      { class: "actions" },
      h("button", { type: "submit", class: "btn" }, "Save draft"),
      button(
        "Submit evidence",
        async () => {
          if (!form.reportValidity()) return;
          const ok = await confirmDialog(
            "Submit the evidence?",
            h(
              "p",
              null,
              "The evidence goes to the cardholder's bank, and can no longer be changed. The bank decides the dispute.",
            ),
            "Submit evidence",
          );
          if (ok) await send(true);
        },
        "primary",
      ),
    ),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void send(false);
  });
  return h(
    "section",
    { "aria-labelledby": "evidence-title" },
    h("h2", { id: "evidence-title" }, "Evidence"),
    h(
      "p",
      { class: "muted" },
      "Text only. Save a draft as often as you like; submit once, by ",
      time(d.evidence_due_by, "the deadline"),
      ".",
    ),
    form,
  );
}

/** The evidence as submitted (or as it stood when the dispute closed): read only. */
function evidenceView(d: Dispute): HTMLElement {
  const given = EVIDENCE.filter((e) => d.evidence[e.name]);
  return h(
    "section",
    { "aria-labelledby": "evidence-title" },
    h("h2", { id: "evidence-title" }, "Evidence"),
    given.length === 0
      ? h("p", { class: "muted" }, "No evidence was given.")
      : details(given.map((e) => [e.label, h("span", { class: "prose" }, d.evidence[e.name] ?? "")])),
  );
}

/** The balance transactions the dispute made (Dispute.balance_transactions), each read by id. */
async function disputeMoney(ctx: Ctx, d: Dispute): Promise<Child> {
  if (d.balance_transactions.length === 0)
    return h("p", { class: "muted" }, isInquiry(d) ? "None: an inquiry moves no money." : "None yet.");
  if (!ctx.can("getBalanceTransaction"))
    return h(
      "ul",
      null,
      d.balance_transactions.map((id) => h("li", null, h("code", null, id))),
    );
  const rows = await Promise.all(
    d.balance_transactions.map(async (id) =>
      need(await ctx.api.GET("/v1/balance_transactions/{id}", { params: { path: { id } } })),
    ),
  );
  const caption = "The dispute's balance transactions";
  // In its own scrolling region, as the lists are: a phone scrolls the table, not the page.
  return h(
    "div",
    { class: "table-wrap", role: "region", "aria-label": `${caption} table`, tabindex: 0 },
    table<BalanceTransaction>(
      caption,
      [
        { header: "Transaction", rowHeader: true, cell: (t) => link(`balance-transactions/${t.id}`, t.id) },
        { header: "Type", cell: (t) => typeLabel(t.type) },
        // A dispute fee's transaction has no amount: its fee is what it takes (BalanceTransaction.fee).
        { header: "Amount", cell: (t) => amount(t.amount, t.currency) },
        { header: "Fee", cell: (t) => amount(t.fee, t.currency) },
        { header: "Net", cell: (t) => amount(t.net, t.currency) },
        { header: "Created", cell: (t) => time(t.created_at) },
      ],
      rows,
    ),
  );
}

async function disputeDetail(ctx: Ctx, id: string): Promise<HTMLElement> {
  const d = need(await ctx.api.GET("/v1/disputes/{id}", { params: { path: { id } } }));
  const merchants = merchantNames(ctx);
  const [, moneyMoved] = await Promise.all([merchants.load([d.merchant_id]), disputeMoney(ctx, d)]);
  const pageError = h("div", { class: "error-box", role: "alert", hidden: true });
  const none = (text = "none") => h("span", { class: "muted" }, text);
  const open = NEEDS_RESPONSE.includes(d.status);
  return h(
    "div",
    null,
    h("p", { class: "crumbs" }, link("disputes", "Disputes"), " / ", h("code", null, d.id)),
    pageHeader(`${money(d.amount, d.currency)} · ${statusText(d.status)}`),
    pageError,
    disputeActions(ctx, d, pageError),
    details([
      ["Id", h("code", null, d.id)],
      ["Status", disputeStatus(d)],
      ["Kind", isInquiry(d) ? "Inquiry: no money moved unless it becomes a chargeback" : "Chargeback"],
      ["Amount", amount(d.amount, d.currency)],
      ["Dispute fee", amount(d.fee, d.currency)],
      ["Reason", reasonText(d.reason)],
      ["Charge", ctx.can("getCharge") ? link(`charges/${d.charge_id}`, d.charge_id) : h("code", null, d.charge_id)],
      ["Merchant", merchants.cell(d.merchant_id)],
      [
        "Evidence due by",
        d.evidence_due_by ? time(d.evidence_due_by) : none(CLOSED.includes(d.status) ? "closed" : "none"),
      ],
      ["Evidence submitted", d.evidence_submitted_at ? time(d.evidence_submitted_at) : none("not yet")],
      ["Charge refundable", d.is_charge_refundable ? "yes" : "no: the cardholder's bank holds the money"],
      ["Created", time(d.created_at)],
      ["Closed", d.closed_at ? time(d.closed_at) : none("not yet")],
    ]),
    open && ctx.can("updateDispute") ? evidenceForm(ctx, d) : evidenceView(d),
    h("h2", null, "Balance transactions"),
    moneyMoved,
  );
}

export const disputesPage: PageDef = {
  path: "disputes",
  title: "Disputes",
  needs: ["listDisputes"],
  render(ctx: Ctx, route: Route) {
    const id = route.segments[1];
    if (id) return disputeDetail(ctx, id);
    const merchants = merchantNames(ctx);
    return h(
      "div",
      null,
      pageHeader("Disputes"),
      h(
        "p",
        { class: "muted" },
        "A dispute is a cardholder's bank taking a captured payment back. Answer one with evidence before its deadline, or accept it.",
      ),
      listView<Dispute>({
        caption: "Disputes",
        query: route.query,
        navigate: (q) => ctx.go("disputes", q),
        empty: "No disputes match.",
        filters: [
          { name: "charge_id", label: "Charge id", placeholder: "tx_…" },
          { name: "merchant_id", label: "Merchant id", placeholder: "mch_…" },
          { name: "status", label: "Status", options: STATUSES },
        ],
        load: async (q) => {
          const page = need(await ctx.api.GET("/v1/disputes", { params: { query: q as never } }));
          await merchants.load(page.data.map((d) => d.merchant_id));
          return page;
        },
        columns: [
          { header: "Dispute", rowHeader: true, cell: (d) => link(`disputes/${d.id}`, d.id) },
          { header: "Amount", cell: (d) => amount(d.amount, d.currency) },
          // The reason under the status: narrow enough for a laptop's 1024 px.
          { header: "Status", cell: (d) => h("span", { class: "named" }, disputeStatus(d), reasonText(d.reason)) },
          { header: "Evidence due", cell: (d) => (d.evidence_due_by ? time(d.evidence_due_by) : "") },
          { header: "Merchant", cell: (d) => merchants.cell(d.merchant_id) },
        ],
      }),
    );
  },
};
