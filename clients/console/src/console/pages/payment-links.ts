import type { components } from "@payments/client";
import { need } from "../api.ts";
import { act, amount, type Ctx, link, type PageDef, pageHeader, type Route, time } from "../app.ts";
import { localInputValue, money } from "../format.ts";
import { listView } from "../list.ts";
import { announce, badge, button, type Child, details, field, formDialog, h, select } from "../ui.ts";
import { chargeStatus } from "./charges.ts";
import { merchantField, merchantNames } from "./merchants.ts";

// Payment links (scope `payment_links`): the list, filtered by merchant and active; one link with its
// hosted page's address, what it takes, its uses and the charges paid through it (listCharges with
// `payment_link_id`); create (createPaymentLink), turn off and on, and change the description and
// expiry (updatePaymentLink).

type PaymentLink = components["schemas"]["PaymentLink"];
type PaymentLinkCreate = components["schemas"]["PaymentLinkCreate"];
type Method = PaymentLink["payment_methods"][number];
type Charge = components["schemas"]["Charge"];

/** The methods a link may offer, and the currency each local method takes (PaymentLinkCreate.payment_methods). */
const METHODS: [Method, string][] = [
  ["card", "Card"],
  ["pix", "Pix (BRL)"],
  ["boleto", "Boleto (BRL)"],
  ["oxxo", "OXXO (MXN)"],
  ["spei", "SPEI (MXN)"],
  ["sepa_debit", "SEPA Direct Debit (EUR)"],
];

function linkStatus(l: PaymentLink): HTMLElement {
  if (!l.active) return badge("off", "muted");
  if (l.expires_at && Date.parse(l.expires_at) <= Date.now()) return badge("expired", "bad");
  if (l.max_uses !== null && l.uses >= l.max_uses) return badge("used up", "warn");
  return badge("active", "ok");
}

function uses(l: PaymentLink): string {
  const limit = l.max_uses === null ? "no limit" : `of ${l.max_uses}`;
  return `${l.uses} ${limit}${l.pending_uses > 0 ? ` (${l.pending_uses} pending)` : ""}`;
}

function afterCompletion(l: PaymentLink): Child {
  const a = l.after_completion;
  if (!a) return h("span", { class: "muted" }, "the default thank-you message");
  return a.type === "message" ? ["Message: ", h("q", null, a.message)] : ["Redirect to ", h("code", null, a.url)];
}

function createLink(ctx: Ctx, merchantId: string): void {
  const merchant = merchantField(ctx, merchantId);
  const amount = h("input", {
    name: "amount",
    type: "number",
    min: 1,
    step: 1,
    required: true,
    inputmode: "numeric",
    "data-param": "amount",
  });
  const currency = h("input", {
    name: "currency",
    required: true,
    pattern: "[A-Za-z]{3}",
    maxlength: 3,
    value: "USD",
    autocomplete: "off",
    "data-param": "currency",
  });
  const preview = h("p", { class: "hint", "aria-live": "polite" });
  const updatePreview = () => {
    const n = Number(amount.value);
    const cur = currency.value.trim().toUpperCase();
    preview.textContent = Number.isInteger(n) && n > 0 && /^[A-Z]{3}$/.test(cur) ? money(n, cur) : "";
  };
  amount.addEventListener("input", updatePreview);
  currency.addEventListener("input", updatePreview);
  const description = h("input", {
    name: "description",
    required: true,
    maxlength: 500,
    autocomplete: "off",
    "data-param": "description",
  });
  const methodBoxes = METHODS.map(([value, label]) =>
    h("label", { class: "check" }, h("input", { type: "checkbox", name: "payment_methods", value }), label),
  );
  const methods = h(
    "fieldset",
    { "data-param": "payment_methods" },
    h("legend", null, "Payment methods"),
    h("div", { class: "checks" }, methodBoxes),
    h("p", { class: "hint" }, "None chosen: card and every local method of the currency."),
  );
  const maxUses = h("input", {
    name: "max_uses",
    type: "number",
    min: 1,
    max: 1_000_000,
    step: 1,
    inputmode: "numeric",
    "data-param": "max_uses",
  });
  const expires = h("input", { name: "expires_at", type: "datetime-local", "data-param": "expires_at" });
  const after = select(
    "after_completion_type",
    [
      ["", "The default thank-you message"],
      ["message", "A message of yours"],
      ["redirect", "Send the payer to an address"],
    ],
    "",
  );
  const message = h("input", {
    name: "after_completion_message",
    maxlength: 500,
    autocomplete: "off",
    "data-param": "after_completion.message",
  });
  const redirect = h("input", {
    name: "after_completion_url",
    type: "url",
    maxlength: 2000,
    placeholder: "https://example.com/thanks",
    autocomplete: "off",
    "data-param": "after_completion.url",
  });
  const messageField = field("Message shown after paying", message);
  const redirectField = field("Address to send the payer to (http or https)", redirect);
  const afterSlot = h("div", null);
  const chooseAfter = () => {
    afterSlot.replaceChildren(
      after.value === "message" ? messageField : after.value === "redirect" ? redirectField : "",
    );
    message.required = after.value === "message";
    redirect.required = after.value === "redirect";
  };
  after.addEventListener("change", chooseAfter);
  chooseAfter();

  const body = (): PaymentLinkCreate => {
    const chosen = methodBoxes
      .map((l) => l.querySelector("input"))
      .filter((i): i is HTMLInputElement => i?.checked === true)
      .map((i) => i.value as Method);
    const completion: PaymentLinkCreate["after_completion"] | undefined =
      after.value === "message"
        ? { type: "message", message: message.value.trim() }
        : after.value === "redirect"
          ? { type: "redirect", url: redirect.value.trim() }
          : undefined;
    return {
      merchant_id: merchant.input.value.trim(),
      amount: Number(amount.value),
      currency: currency.value.trim().toUpperCase(),
      description: description.value.trim(),
      ...(chosen.length > 0 ? { payment_methods: chosen } : {}),
      ...(maxUses.value ? { max_uses: Number(maxUses.value) } : {}),
      ...(expires.value ? { expires_at: new Date(expires.value).toISOString() } : {}),
      ...(completion ? { after_completion: completion } : {}),
    };
  };

  formDialog("Create a payment link", {
    wide: true,
    body: [
      merchant.el,
      field("Amount in minor units", amount, "Cents for USD or EUR: 2500 is 25.00."),
      preview,
      field("Currency", currency),
      field("Description", description, "Shown to the payer on the page."),
      methods,
      field("Most payments it takes (optional)", maxUses, "1 for a one-off invoice; empty for no limit."),
      field("Expires (optional, your local time)", expires),
      field("After paying, the payer sees", after),
      afterSlot,
    ],
    submitLabel: "Create payment link",
    async submit(close) {
      const created = need(await ctx.api.POST("/v1/payment_links", { body: body() }));
      close();
      announce("Payment link created");
      ctx.go(`payment-links/${created.id}`);
      return undefined;
    },
  });
}

function editLink(ctx: Ctx, l: PaymentLink): void {
  const description = h("input", {
    name: "description",
    required: true,
    maxlength: 500,
    value: l.description,
    autocomplete: "off",
    "data-param": "description",
  });
  const expires = h("input", {
    name: "expires_at",
    type: "datetime-local",
    value: l.expires_at ? localInputValue(l.expires_at) : "",
    "data-param": "expires_at",
  });
  formDialog("Edit the payment link", {
    body: [
      field("Description", description, "Shown to the payer on the page."),
      field("Expires (your local time; empty for never)", expires),
    ],
    submitLabel: "Save",
    async submit(close) {
      // Only what changed is sent: an unchanged expiry stays as it was, to the second.
      const expiresAt = expires.value ? new Date(expires.value).toISOString() : null;
      const unchangedExpiry = (l.expires_at ? localInputValue(l.expires_at) : "") === expires.value;
      need(
        await ctx.api.PATCH("/v1/payment_links/{id}", {
          params: { path: { id: l.id } },
          body: {
            description: description.value.trim(),
            ...(unchangedExpiry ? {} : { expires_at: expiresAt }),
          },
        }),
      );
      close();
      announce("Payment link saved");
      ctx.refresh();
      return undefined;
    },
  });
}

function setActive(ctx: Ctx, l: PaymentLink, active: boolean, pageError: HTMLElement): Promise<void> {
  return act(ctx, pageError, active ? "Payment link turned on" : "Payment link turned off", async () =>
    need(await ctx.api.PATCH("/v1/payment_links/{id}", { params: { path: { id: l.id } }, body: { active } })),
  );
}

async function linkDetail(ctx: Ctx, route: Route, id: string): Promise<HTMLElement> {
  const l = need(await ctx.api.GET("/v1/payment_links/{id}", { params: { path: { id } } }));
  const merchants = merchantNames(ctx);
  await merchants.load([l.merchant_id]);
  const pageError = h("div", { class: "error-box", role: "alert", hidden: true });
  const none = (text = "none") => h("span", { class: "muted" }, text);
  const canUpdate = ctx.can("updatePaymentLink");
  return h(
    "div",
    null,
    h("p", { class: "crumbs" }, link("payment-links", "Payment links"), " / ", h("code", null, l.id)),
    pageHeader(l.description),
    pageError,
    h(
      "div",
      { class: "toolbar", role: "group", "aria-label": "Payment link actions" },
      canUpdate
        ? [
            l.active
              ? button("Turn off", () => setActive(ctx, l, false, pageError), "danger")
              : button("Turn on", () => setActive(ctx, l, true, pageError), "primary"),
            button("Edit description and expiry", () => editLink(ctx, l)),
          ]
        : h("span", { class: "muted" }, "This key may not change payment links."),
    ),
    details([
      ["Id", h("code", null, l.id)],
      ["Page", h("a", { href: l.url, "data-url": "" }, l.url)],
      ["Status", [linkStatus(l), l.active ? " takes payments" : " takes no payments"]],
      ["Amount", amount(l.amount, l.currency)],
      ["Description", l.description],
      ["Payment methods", l.payment_methods.join(", ")],
      ["Uses", uses(l)],
      ["Expires", l.expires_at ? time(l.expires_at) : none("never")],
      ["After paying", afterCompletion(l)],
      ["Merchant", merchants.cell(l.merchant_id)],
      ["Metadata", Object.keys(l.metadata).length ? h("code", null, JSON.stringify(l.metadata)) : none()],
      ["Created", time(l.created_at)],
      ["Updated", time(l.updated_at)],
    ]),
    ctx.can("listCharges")
      ? [
          h("h2", null, "Charges through this link"),
          listView<Charge>({
            caption: "Charges through this link",
            query: route.query,
            navigate: (q) => ctx.go(`payment-links/${id}`, q),
            empty: "No payment yet.",
            load: async (q) =>
              need(await ctx.api.GET("/v1/charges", { params: { query: { ...q, payment_link_id: id } as never } })),
            columns: [
              {
                header: "Charge",
                rowHeader: true,
                cell: (c) => (ctx.can("getCharge") ? link(`charges/${c.id}`, c.id) : h("code", null, c.id)),
              },
              { header: "Amount", cell: (c) => amount(c.amount, c.currency) },
              { header: "Status", cell: chargeStatus },
              { header: "Method", cell: (c) => c.payment_method.type },
              { header: "Created", cell: (c) => time(c.created_at) },
            ],
          }),
        ]
      : null,
  );
}

export const paymentLinksPage: PageDef = {
  path: "payment-links",
  title: "Payment links",
  needs: ["listPaymentLinks"],
  render(ctx: Ctx, route: Route) {
    const id = route.segments[1];
    if (id) return linkDetail(ctx, route, id);
    const merchants = merchantNames(ctx);
    return h(
      "div",
      null,
      pageHeader(
        "Payment links",
        ctx.can("createPaymentLink")
          ? button("Create payment link", () => createLink(ctx, route.query.get("merchant_id") ?? ""), "primary")
          : null,
      ),
      h(
        "p",
        { class: "muted" },
        "Share a link's page address: whoever opens it pays the amount to the merchant, with no key and no checkout of your own.",
      ),
      listView<PaymentLink>({
        caption: "Payment links",
        query: route.query,
        navigate: (q) => ctx.go("payment-links", q),
        empty: "No payment links match.",
        filters: [
          { name: "merchant_id", label: "Merchant id", placeholder: "mch_…" },
          {
            name: "active",
            label: "Active",
            options: [
              ["true", "on"],
              ["false", "off"],
            ],
          },
        ],
        load: async (q) => {
          const page = need(await ctx.api.GET("/v1/payment_links", { params: { query: q as never } }));
          await merchants.load(page.data.map((l) => l.merchant_id));
          return page;
        },
        columns: [
          { header: "Description", rowHeader: true, cell: (l) => link(`payment-links/${l.id}`, l.description) },
          { header: "Amount", cell: (l) => amount(l.amount, l.currency) },
          { header: "Status", cell: linkStatus },
          { header: "Uses", cell: uses },
          { header: "Merchant", cell: (l) => merchants.cell(l.merchant_id) },
          { header: "Created", cell: (l) => time(l.created_at) },
        ],
      }),
    );
  },
};
