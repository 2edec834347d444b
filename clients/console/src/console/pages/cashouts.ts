import type { components } from "@payments/client";
import { need } from "../api.ts";
import { act, amount, type Ctx, link, type PageDef, pageHeader, type Route, time } from "../app.ts";
import { money } from "../format.ts";
import { listView } from "../list.ts";
import { announce, badge, button, type Child, confirmDialog, details, field, formDialog, h, select } from "../ui.ts";
import { merchantField, merchantNames } from "./merchants.ts";

// Cashouts (scope `cashouts`): the list, filtered by merchant and status; one cashout with its masked
// destination; create (createCashout: merchant, amount in minor units, currency, a destination by
// kind), cancel while `pending` (cancelCashout), and in the sandbox play the bank (sandboxPayCashout,
// sandboxFailCashout). The console never shows a full account number: the API only ever answers with
// the destination masked, and the form's fields leave the page with its dialog.

type Cashout = components["schemas"]["Cashout"];
type CashoutCreate = components["schemas"]["CashoutCreate"];
type DestinationInput = CashoutCreate["destination"];
type FailureCode = NonNullable<Cashout["failure_code"]>;

const STATUSES: Cashout["status"][] = ["pending", "in_transit", "paid", "failed", "canceled"];

const FAILURE_CODES: [FailureCode, string][] = [
  ["could_not_process", "could_not_process: the transfer could not be processed"],
  ["account_closed", "account_closed: the destination account is closed"],
  ["no_account", "no_account: no account matches the destination"],
  ["declined", "declined: the bank refused the transfer"],
];

type DestinationType = DestinationInput["type"];

/** The destination kinds, their label and the currency each is paid in (CashoutCreate.currency). */
const DESTINATIONS: { type: DestinationType; label: string; currency: string | null }[] = [
  { type: "iban", label: "IBAN (bank account, any supported currency)", currency: null },
  { type: "us_bank_account", label: "US bank account (ACH, USD)", currency: "USD" },
  { type: "pix", label: "Pix key (Brazil, BRL)", currency: "BRL" },
  { type: "clabe", label: "CLABE (Mexico, MXN)", currency: "MXN" },
];

export function cashoutStatus(c: Pick<Cashout, "status">): HTMLElement {
  const tone =
    c.status === "paid"
      ? "ok"
      : c.status === "failed"
        ? "bad"
        : c.status === "pending" || c.status === "in_transit"
          ? "info"
          : "muted";
  return badge(c.status.replace("_", " "), tone);
}

const destinationType = (t: Cashout["destination"]["type"]) =>
  ({ iban: "IBAN", us_bank_account: "US account", pix: "pix", clabe: "CLABE" })[t];

/** The destination as the API shows it: masked, never the full account number. */
function destination(c: Cashout): string {
  return `${destinationType(c.destination.type)} ${c.destination.masked}`;
}

/** A text input of the cashout form, naming the body field it sends (`data-param`, for the API's problems). */
function input(param: string, attrs: Record<string, string | number | boolean> = {}): HTMLInputElement {
  return h("input", {
    name: param.replace("destination.", ""),
    required: true,
    autocomplete: "off",
    spellcheck: "false",
    "data-param": param,
    ...attrs,
  });
}

function createCashout(ctx: Ctx, merchantId: string): void {
  const merchant = merchantField(ctx, merchantId);
  const balance = h("p", { class: "hint", "aria-live": "polite" });
  const showBalance = async () => {
    const id = merchant.input.value.trim();
    balance.textContent = "";
    if (!ctx.can("getMerchantBalance") || !/^mch_[0-9A-Za-z]{24}$/.test(id)) return;
    const { data } = await ctx.api.GET("/v1/merchants/{id}/balance", { params: { path: { id } } });
    if (merchant.input.value.trim() !== id || !data) return;
    balance.textContent =
      data.balances.length === 0
        ? "Available: nothing yet."
        : `Available: ${data.balances.map((b) => money(b.available, b.currency)).join(", ")}.`;
  };
  merchant.input.addEventListener("input", () => void showBalance());
  void showBalance();

  const amount = input("amount", { type: "number", min: 1, step: 1, inputmode: "numeric" });
  const currency = input("currency", {
    pattern: "[A-Za-z]{3}",
    maxlength: 3,
    value: "EUR",
    autocapitalize: "characters",
  });
  const preview = h("p", { class: "hint", "aria-live": "polite" });
  const updatePreview = () => {
    const n = Number(amount.value);
    const cur = currency.value.trim().toUpperCase();
    preview.textContent = Number.isInteger(n) && n > 0 && /^[A-Z]{3}$/.test(cur) ? money(n, cur) : "";
  };
  amount.addEventListener("input", updatePreview);
  currency.addEventListener("input", updatePreview);

  const type = select(
    "destination_type",
    DESTINATIONS.map((d) => [d.type, d.label]),
    "iban",
  );
  type.dataset.param = "destination.type";

  // One fieldset per kind, and only the chosen one in the form: the others' fields are neither
  // validated nor sent, and a number typed for another kind does not stay on the page.
  const holder = () => input("destination.account_holder", { maxlength: 200 });
  const fields = {
    iban: {
      iban: input("destination.iban", { minlength: 15, maxlength: 42, placeholder: "DE89 3704 0044 0532 0130 00" }),
      account_holder: holder(),
    },
    us_bank_account: {
      routing_number: input("destination.routing_number", { maxlength: 20, inputmode: "numeric" }),
      account_number: input("destination.account_number", { maxlength: 30, inputmode: "numeric" }),
      account_type: select("account_type", [
        ["checking", "Checking"],
        ["savings", "Savings"],
      ]),
      account_holder: holder(),
    },
    pix: {
      key: input("destination.key", { maxlength: 100, placeholder: "CPF, CNPJ, e-mail, +55 phone or random key" }),
      key_type: select("key_type", [
        ["", "Recognised from the key"],
        ["cpf", "CPF"],
        ["cnpj", "CNPJ"],
        ["email", "E-mail"],
        ["phone", "Phone"],
        ["evp", "Random key (EVP)"],
      ]),
    },
    clabe: {
      clabe: input("destination.clabe", { minlength: 18, maxlength: 24, inputmode: "numeric" }),
      account_holder: holder(),
    },
  };
  fields.us_bank_account.account_type.dataset.param = "destination.account_type";
  fields.pix.key_type.dataset.param = "destination.key_type";
  const labels: Record<string, string> = {
    iban: "IBAN",
    account_holder: "Account holder",
    routing_number: "Routing number (9 digits)",
    account_number: "Account number",
    account_type: "Account type",
    key: "Pix key",
    key_type: "Key type",
    clabe: "CLABE (18 digits)",
  };
  const fieldset = (t: DestinationType) =>
    h(
      "fieldset",
      { "data-destination": t },
      h("legend", null, DESTINATIONS.find((d) => d.type === t)?.label ?? t),
      Object.entries(fields[t]).map(([name, control]) => field(labels[name] ?? name, control)),
    );
  const destinationSlot = h("div", null);
  let previous: DestinationType = "iban";
  const choose = () => {
    const chosen = type.value as DestinationType;
    if (previous !== chosen) {
      for (const control of Object.values(fields[previous]))
        if (control instanceof HTMLInputElement) control.value = "";
    }
    destinationSlot.replaceChildren(fieldset(chosen));
    // The currency follows the kind, unless the holder typed another one.
    const before = DESTINATIONS.find((d) => d.type === previous)?.currency ?? "EUR";
    const next = DESTINATIONS.find((d) => d.type === chosen)?.currency ?? "EUR";
    if (currency.value.trim().toUpperCase() === before) currency.value = next;
    previous = chosen;
    updatePreview();
  };
  type.addEventListener("change", choose);
  choose();
  const description = h("input", {
    name: "description",
    maxlength: 1000,
    autocomplete: "off",
    "data-param": "description",
  });

  const body = (): CashoutCreate => {
    const t = type.value as DestinationType;
    const v = (el: HTMLInputElement | HTMLSelectElement) => el.value.trim();
    let dest: DestinationInput;
    if (t === "iban") dest = { type: t, iban: v(fields.iban.iban), account_holder: v(fields.iban.account_holder) };
    else if (t === "us_bank_account") {
      const f = fields.us_bank_account;
      dest = {
        type: t,
        routing_number: v(f.routing_number),
        account_number: v(f.account_number),
        account_type: v(f.account_type) as "checking" | "savings",
        account_holder: v(f.account_holder),
      };
    } else if (t === "pix") {
      const keyType = v(fields.pix.key_type);
      dest = {
        type: t,
        key: v(fields.pix.key),
        ...(keyType ? { key_type: keyType as "cpf" | "cnpj" | "email" | "phone" | "evp" } : {}),
      };
    } else dest = { type: t, clabe: v(fields.clabe.clabe), account_holder: v(fields.clabe.account_holder) };
    return {
      merchant_id: merchant.input.value.trim(),
      amount: Number(amount.value),
      currency: currency.value.trim().toUpperCase(),
      destination: dest,
      ...(description.value.trim() ? { description: description.value.trim() } : {}),
    };
  };

  formDialog("Create a cashout", {
    wide: true,
    body: [
      merchant.el,
      balance,
      field(
        "Amount in minor units",
        amount,
        "Cents for EUR or USD: 2500 is 25.00. The available balance must cover it.",
      ),
      preview,
      field("Currency", currency),
      field("Destination", type),
      destinationSlot,
      field("Description (optional)", description),
    ],
    submitLabel: "Create cashout",
    async submit(close) {
      const created = need(await ctx.api.POST("/v1/cashouts", { body: body() }));
      for (const set of Object.values(fields))
        for (const control of Object.values(set)) if (control instanceof HTMLInputElement) control.value = "";
      close();
      announce("Cashout created");
      ctx.go(`cashouts/${created.id}`);
      return undefined;
    },
  });
}

/** Fails a pending cashout as the destination's bank would (sandbox); a refusal stays in the dialog. */
function failCashout(ctx: Ctx, c: Cashout): void {
  const code = select("failure_code", FAILURE_CODES);
  code.dataset.param = "failure_code";
  formDialog("Fail the cashout (sandbox)", {
    body: [
      h(
        "p",
        null,
        "As the destination's bank refusing it: the cashout fails and its amount returns to the available balance.",
      ),
      field("Failure code", code),
    ],
    submitLabel: "Fail cashout",
    tone: "danger",
    async submit(close) {
      need(
        await ctx.api.POST("/v1/sandbox/cashouts/{id}/fail", {
          params: { path: { id: c.id } },
          body: { failure_code: code.value as FailureCode },
        }),
      );
      close();
      announce("Cashout failed");
      ctx.refresh();
      return undefined;
    },
  });
}

function cashoutActions(ctx: Ctx, c: Cashout, pageError: HTMLElement): HTMLElement {
  const path = { params: { path: { id: c.id } } };
  const actions: Child[] = [];
  if (c.status === "pending" && ctx.can("cancelCashout")) {
    actions.push(
      button(
        "Cancel cashout",
        async () => {
          const ok = await confirmDialog(
            "Cancel this cashout?",
            h(
              "p",
              null,
              `${money(c.amount, c.currency)} return to the merchant's available balance. This cannot be undone.`,
            ),
            "Cancel cashout",
          );
          if (ok)
            await act(ctx, pageError, "Cashout canceled", async () =>
              need(await ctx.api.POST("/v1/cashouts/{id}/cancel", path)),
            );
        },
        "danger",
      ),
    );
  }
  // The sandbox plays the destination's bank; ctx.can also refuses sandbox operations to a production key.
  if (!c.livemode && (c.status === "pending" || c.status === "in_transit")) {
    if (ctx.can("sandboxPayCashout"))
      actions.push(
        button("Pay now (sandbox)", () =>
          act(ctx, pageError, "Cashout processed", async () =>
            need(await ctx.api.POST("/v1/sandbox/cashouts/{id}/pay", path)),
          ),
        ),
      );
    if (ctx.can("sandboxFailCashout")) actions.push(button("Fail now (sandbox)", () => failCashout(ctx, c)));
  }
  return h(
    "div",
    { class: "toolbar", role: "group", "aria-label": "Cashout actions" },
    actions.length > 0 ? actions : h("span", { class: "muted" }, "No action applies to this cashout now."),
  );
}

async function cashoutDetail(ctx: Ctx, id: string): Promise<HTMLElement> {
  const c = need(await ctx.api.GET("/v1/cashouts/{id}", { params: { path: { id } } }));
  const merchants = merchantNames(ctx);
  await merchants.load([c.merchant_id]);
  const d = c.destination;
  const pageError = h("div", { class: "error-box", role: "alert", hidden: true });
  const none = (text = "none") => h("span", { class: "muted" }, text);
  return h(
    "div",
    null,
    h("p", { class: "crumbs" }, link("cashouts", "Cashouts"), " / ", h("code", null, c.id)),
    pageHeader(`${money(c.amount, c.currency)} · ${c.status.replace("_", " ")}`),
    pageError,
    cashoutActions(ctx, c, pageError),
    details([
      ["Id", h("code", null, c.id)],
      ["Status", cashoutStatus(c)],
      ["Amount", amount(c.amount, c.currency)],
      ["Merchant", merchants.cell(c.merchant_id)],
      ["Destination", [destinationType(d.type), " ", h("code", { "data-masked": "" }, d.masked)]],
      ["Account holder", d.account_holder ?? none()],
      ...(d.country ? ([["Country", d.country]] as [string, Child][]) : []),
      ...(d.routing_number ? ([["Routing number", h("code", null, d.routing_number)]] as [string, Child][]) : []),
      ...(d.account_type ? ([["Account type", d.account_type]] as [string, Child][]) : []),
      ...(d.bank_code ? ([["Bank code", h("code", null, d.bank_code)]] as [string, Child][]) : []),
      ...(d.key_type ? ([["Key type", d.key_type]] as [string, Child][]) : []),
      ["Description", c.description ?? none()],
      ["Failure", c.failure_code ? `${c.failure_code}: ${c.failure_message ?? ""}` : none()],
      ["Metadata", Object.keys(c.metadata).length ? h("code", null, JSON.stringify(c.metadata)) : none()],
      // Reconciliation (issue 30): the balance transactions this cashout paid out, their net its amount.
      ...(ctx.can("listBalanceTransactions")
        ? ([
            [
              "Reconciliation",
              link("balance-transactions", "The balance transactions it paid out", { cashout_id: c.id }),
            ],
          ] as [string, Child][])
        : []),
      ["Created", time(c.created_at)],
      ["Updated", time(c.updated_at)],
    ]),
  );
}

export const cashoutsPage: PageDef = {
  path: "cashouts",
  title: "Cashouts",
  needs: ["listCashouts"],
  render(ctx: Ctx, route: Route) {
    const id = route.segments[1];
    if (id) return cashoutDetail(ctx, id);
    const merchants = merchantNames(ctx);
    return h(
      "div",
      null,
      pageHeader(
        "Cashouts",
        ctx.can("createCashout")
          ? button("Create cashout", () => createCashout(ctx, route.query.get("merchant_id") ?? ""), "primary")
          : null,
      ),
      h(
        "p",
        { class: "muted" },
        "A cashout takes money out of a merchant's available balance to its own account. Destinations are shown masked: the full account number is never shown again.",
      ),
      listView<Cashout>({
        caption: "Cashouts",
        query: route.query,
        navigate: (q) => ctx.go("cashouts", q),
        empty: "No cashouts match.",
        filters: [
          { name: "merchant_id", label: "Merchant id", placeholder: "mch_…" },
          { name: "status", label: "Status", options: STATUSES.map((s) => [s, s.replace("_", " ")]) },
        ],
        load: async (q) => {
          const page = need(await ctx.api.GET("/v1/cashouts", { params: { query: q as never } }));
          await merchants.load(page.data.map((c) => c.merchant_id));
          return page;
        },
        columns: [
          { header: "Cashout", rowHeader: true, cell: (c) => link(`cashouts/${c.id}`, c.id) },
          { header: "Amount", cell: (c) => amount(c.amount, c.currency) },
          { header: "Status", cell: cashoutStatus },
          { header: "Destination", cell: destination },
          { header: "Merchant", cell: (c) => merchants.cell(c.merchant_id) },
          { header: "Created", cell: (c) => time(c.created_at) },
        ],
      }),
    );
  },
};
