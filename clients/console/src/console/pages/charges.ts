import type { components } from "@payments/client";
import { need } from "../api.ts";
import { act, amount, type Ctx, cardLabel, link, type PageDef, pageHeader, type Route, time } from "../app.ts";
import { money } from "../format.ts";
import { listView } from "../list.ts";
import {
  announce,
  badge,
  button,
  type Child,
  confirmDialog,
  details,
  field,
  formDialog,
  h,
  newUid,
  select,
} from "../ui.ts";
import { merchantNames } from "./merchants.ts";

// Charges (scope `charges`): the list, filtered by merchant, status and payment link; one charge with its refunds and
// the actions its state allows: capture, void, refund, approve or reject a fraud review, and, in the
// sandbox, complete or expire a pending local payment. Each action is offered only when the key's
// scopes allow its operation; the server refuses it anyway (403) otherwise.

type Charge = components["schemas"]["Charge"];
type Refund = components["schemas"]["Refund"];

const STATUSES = [
  "pending",
  "authorized",
  "captured",
  "partially_refunded",
  "refunded",
  "declined",
  "blocked",
  "voided",
  "expired",
];

export function chargeStatus(c: Pick<Charge, "status" | "review">): HTMLElement {
  const tone =
    c.status === "captured" || c.status === "partially_refunded"
      ? "ok"
      : c.status === "declined" || c.status === "blocked" || c.status === "expired"
        ? "bad"
        : c.status === "authorized" || c.status === "pending"
          ? "info"
          : "muted";
  const held = c.review?.status === "open";
  return h("span", null, badge(c.status.replace("_", " "), tone), held ? [" ", badge("review open", "warn")] : null);
}

function method(c: Charge): Child {
  const pm = c.payment_method;
  return pm.type === "card" ? cardLabel(pm.brand, pm.last4) : pm.type;
}

/** A form in a dialog with an amount (minor units) and, for refunds, a reason. */
function amountDialog(
  ctx: Ctx,
  title: string,
  charge: Charge,
  max: number,
  submitLabel: string,
  send: (amount: number, reason: string | null) => Promise<unknown>,
  withReason: boolean,
): void {
  const amount = h("input", {
    name: "amount",
    type: "number",
    min: 1,
    max,
    step: 1,
    required: true,
    value: max,
    inputmode: "numeric",
  });
  const preview = h("p", { class: "hint", "aria-live": "polite" }, money(max, charge.currency));
  amount.addEventListener("input", () => {
    const n = Number(amount.value);
    preview.textContent = Number.isInteger(n) && n > 0 ? money(n, charge.currency) : "";
  });
  const reason = select("reason", [
    ["", "No reason given"],
    ["requested_by_customer", "Requested by the customer"],
    ["duplicate", "Duplicate"],
    ["fraudulent", "Fraudulent"],
  ]);
  formDialog(title, {
    body: [
      field(`Amount in minor units of ${charge.currency} (at most ${max})`, amount),
      preview,
      withReason ? field("Reason", reason) : null,
    ],
    submitLabel,
    async submit(close) {
      const n = Number(amount.value);
      if (!Number.isInteger(n) || n < 1 || n > max) return `The amount must be a whole number from 1 to ${max}.`;
      await send(n, reason.value || null);
      close();
      ctx.refresh();
      return undefined;
    },
  });
}

type DisputeReason = components["schemas"]["DisputeReason"];

const DISPUTE_REASONS: DisputeReason[] = [
  "fraudulent",
  "product_not_received",
  "product_unacceptable",
  "duplicate",
  "subscription_canceled",
  "credit_not_processed",
  "unrecognized",
  "general",
];

/** Opens a dispute on the charge as the cardholder's bank would (sandbox), then shows it. */
function openDispute(ctx: Ctx, c: Charge): void {
  const reason = select(
    "reason",
    DISPUTE_REASONS.map((r) => [r, r.replaceAll("_", " ")]),
    "fraudulent",
  );
  const inquiry = h("input", { type: "checkbox", name: "inquiry", id: newUid("inquiry") });
  formDialog("Open a dispute (sandbox)", {
    body: [
      h(
        "p",
        null,
        "As the cardholder's bank: a chargeback takes the amount and the dispute fee from the merchant's balance at once.",
      ),
      field("Reason", reason),
      h(
        "div",
        { class: "check" },
        inquiry,
        h("label", { for: inquiry.id }, "An inquiry only: no money moves unless it becomes a chargeback"),
      ),
    ],
    submitLabel: "Open dispute",
    async submit(close) {
      const dispute = need(
        await ctx.api.POST("/v1/sandbox/charges/{id}/dispute", {
          params: { path: { id: c.id } },
          body: { reason: reason.value as DisputeReason, inquiry: inquiry.checked },
        }),
      );
      close();
      announce("Dispute opened");
      ctx.go(`disputes/${dispute.id}`);
      return undefined;
    },
  });
}

function chargeActions(ctx: Ctx, c: Charge, pageError: HTMLElement): HTMLElement {
  const id = c.id;
  const path = { params: { path: { id } } };
  const reviewOpen = c.review?.status === "open";
  const actions: Child[] = [];
  if (c.status === "authorized" && !reviewOpen) {
    if (ctx.can("captureCharge"))
      actions.push(
        button("Capture", () =>
          amountDialog(
            ctx,
            "Capture the charge",
            c,
            c.amount,
            "Capture",
            async (amount) => need(await ctx.api.POST("/v1/charges/{id}/capture", { ...path, body: { amount } })),
            false,
          ),
        ),
      );
    if (ctx.can("voidCharge"))
      actions.push(
        button(
          "Void",
          async () => {
            if (
              await confirmDialog(
                "Void this charge?",
                h("p", null, "The authorization is released; nothing is captured."),
                "Void charge",
              )
            )
              await act(ctx, pageError, "Charge voided", async () =>
                need(await ctx.api.POST("/v1/charges/{id}/void", path)),
              );
          },
          "danger",
        ),
      );
  }
  if (reviewOpen) {
    if (ctx.can("approveChargeReview"))
      actions.push(
        button(
          "Approve review",
          () =>
            act(ctx, pageError, "Review approved", async () =>
              need(await ctx.api.POST("/v1/charges/{id}/review/approve", path)),
            ),
          "primary",
        ),
      );
    if (ctx.can("rejectChargeReview"))
      actions.push(
        button(
          "Reject review",
          async () => {
            if (
              await confirmDialog(
                "Reject this charge?",
                h("p", null, "The charge is voided; nothing was captured."),
                "Reject",
              )
            )
              await act(ctx, pageError, "Review rejected", async () =>
                need(await ctx.api.POST("/v1/charges/{id}/review/reject", path)),
              );
          },
          "danger",
        ),
      );
  }
  const refundable = c.amount_captured - c.amount_refunded;
  if ((c.status === "captured" || c.status === "partially_refunded") && refundable > 0 && ctx.can("createRefund")) {
    actions.push(
      button("Refund", () =>
        amountDialog(
          ctx,
          "Refund the charge",
          c,
          refundable,
          "Refund",
          async (amount, reason) =>
            need(
              await ctx.api.POST("/v1/charges/{id}/refunds", {
                ...path,
                body: { amount, ...(reason ? { reason: reason as Refund["reason"] & string } : {}) },
              }),
            ),
          true,
        ),
      ),
    );
  }
  // The sandbox plays the cardholder's bank (sandboxOpenDispute); the server refuses a charge that has one.
  if ((c.status === "captured" || c.status === "partially_refunded") && !c.livemode && ctx.can("sandboxOpenDispute")) {
    actions.push(button("Open a dispute (sandbox)", () => openDispute(ctx, c)));
  }
  if (c.status === "pending" && !c.livemode) {
    if (ctx.can("sandboxCompleteCharge"))
      actions.push(
        button("Complete (sandbox: the payer pays)", () =>
          act(ctx, pageError, "Payment completed", async () =>
            need(await ctx.api.POST("/v1/sandbox/charges/{id}/complete", path)),
          ),
        ),
      );
    if (ctx.can("sandboxExpireCharge"))
      actions.push(
        button("Expire (sandbox)", () =>
          act(ctx, pageError, "Payment expired", async () =>
            need(await ctx.api.POST("/v1/sandbox/charges/{id}/expire", path)),
          ),
        ),
      );
  }
  return h(
    "div",
    { class: "toolbar", role: "group", "aria-label": "Charge actions" },
    actions.length > 0 ? actions : h("span", { class: "muted" }, "No action applies to this charge now."),
  );
}

async function chargeDetail(ctx: Ctx, route: Route, id: string): Promise<HTMLElement> {
  const c = need(await ctx.api.GET("/v1/charges/{id}", { params: { path: { id } } }));
  const merchants = merchantNames(ctx);
  await merchants.load([c.merchant_id]);
  const pageError = h("div", { class: "error-box", role: "alert", hidden: true });
  const related: Child[] = [];
  if (ctx.can("listDisputes")) related.push(link("disputes", "This charge's disputes", { charge_id: c.id }));
  if (ctx.can("listBalanceTransactions")) {
    if (related.length > 0) related.push(" · ");
    related.push(link("balance-transactions", "Its balance transactions", { source: c.id }));
  }
  return h(
    "div",
    null,
    h("p", { class: "crumbs" }, link("charges", "Charges"), " / ", h("code", null, c.id)),
    pageHeader(`${money(c.amount, c.currency)} · ${c.status.replace("_", " ")}`),
    pageError,
    chargeActions(ctx, c, pageError),
    details([
      ["Id", h("code", null, c.id)],
      ["Status", chargeStatus(c)],
      ["Amount", amount(c.amount, c.currency)],
      ["Captured", amount(c.amount_captured, c.currency)],
      ["Refunded", amount(c.amount_refunded, c.currency)],
      ["Fee", amount(c.fee, c.currency)],
      ["Net", amount(c.net, c.currency)],
      ["Merchant", merchants.cell(c.merchant_id)],
      ["Payment method", method(c)],
      ...(c.payment_link_id
        ? ([
            [
              "Payment link",
              ctx.can("getPaymentLink")
                ? link(`payment-links/${c.payment_link_id}`, c.payment_link_id)
                : h("code", null, c.payment_link_id),
            ],
          ] as [string, Child][])
        : []),
      ["Description", c.description ?? h("span", { class: "muted" }, "none")],
      [
        "Failure",
        c.failure_code ? `${c.failure_code}: ${c.failure_message ?? ""}` : h("span", { class: "muted" }, "none"),
      ],
      [
        "Fraud review",
        c.review
          ? [
              badge(c.review.status, c.review.status === "open" ? "warn" : "muted"),
              " until ",
              time(c.review.expires_at),
            ]
          : h("span", { class: "muted" }, "none"),
      ],
      [
        "Next action",
        c.next_action ? `${c.next_action.type} (${c.next_action.reference})` : h("span", { class: "muted" }, "none"),
      ],
      ["Created", time(c.created_at)],
      // One short term for both links: a longer term would narrow the values' column on a phone.
      ...(related.length > 0 ? ([["Related", related]] as [string, Child][]) : []),
    ]),
    ctx.can("listRefunds")
      ? [
          h("h2", null, "Refunds"),
          listView<Refund>({
            caption: "Refunds",
            query: route.query,
            navigate: (q) => ctx.go(`charges/${id}`, q),
            empty: "No refunds.",
            load: async (q) =>
              need(await ctx.api.GET("/v1/charges/{id}/refunds", { params: { path: { id }, query: q } })),
            columns: [
              { header: "Refund", rowHeader: true, cell: (r) => h("code", null, r.id) },
              { header: "Amount", cell: (r) => amount(r.amount, r.currency) },
              { header: "Reason", cell: (r) => r.reason ?? "" },
              { header: "Created", cell: (r) => time(r.created_at) },
            ],
          }),
        ]
      : null,
  );
}

export const chargesPage: PageDef = {
  path: "charges",
  title: "Charges",
  needs: ["listCharges"],
  render(ctx: Ctx, route: Route) {
    const id = route.segments[1];
    if (id) return chargeDetail(ctx, route, id);
    const merchants = merchantNames(ctx);
    return h(
      "div",
      null,
      pageHeader("Charges"),
      listView<Charge>({
        caption: "Charges",
        query: route.query,
        navigate: (q) => ctx.go("charges", q),
        empty: "No charges match.",
        filters: [
          { name: "merchant_id", label: "Merchant id", placeholder: "mch_…" },
          { name: "status", label: "Status", options: STATUSES.map((s) => [s, s.replace("_", " ")]) },
          { name: "payment_link_id", label: "Payment link id", placeholder: "plink_…" },
        ],
        load: async (q) => {
          const page = need(await ctx.api.GET("/v1/charges", { params: { query: q as never } }));
          await merchants.load(page.data.map((c) => c.merchant_id));
          return page;
        },
        columns: [
          { header: "Charge", rowHeader: true, cell: (c) => link(`charges/${c.id}`, c.id) },
          { header: "Amount", cell: (c) => amount(c.amount, c.currency) },
          { header: "Status", cell: chargeStatus },
          { header: "Method", cell: method },
          { header: "Merchant", cell: (c) => merchants.cell(c.merchant_id) },
          { header: "Created", cell: (c) => time(c.created_at) },
        ],
      }),
    );
  },
};
