// @ts-check
// The hosted payment page's script (pay.html). It checks what the payer types (validate.js), sends the
// payment to the public operation payPaymentLink (spec/resources/payment-links.tsp) on the same origin
// with the page's token, and shows the outcome. It never logs, stores or echoes the card number: the
// number goes from its field into the request body and nowhere else, and the fields are cleared after
// an answer. Every text it shows is set with textContent, never as HTML.

// npm `qr` (paulmillr/qr), served by this server as it is installed (package.json `vendoredAssets`):
// nothing is loaded from another host.
import { encodeQR } from "./qr.js";
import {
  cardBrand,
  checkCvc,
  checkEmail,
  checkExpiry,
  checkHolder,
  checkIban,
  checkNumber,
  digitsOf,
  formatCardNumber,
  formatExpiry,
} from "./validate.js";

/**
 * The shapes the pay operation answers with, from the generated contract (spec/resources/payment-links.tsp
 * PaymentLinkPayment, spec/common/problems.tsp Problem): a change there fails this page's type check.
 * @typedef {import("@payments/contract/types").components["schemas"]} Schemas
 * @typedef {Schemas["PaymentLinkPayment"]} Payment
 * @typedef {Schemas["NextAction"]} NextAction
 * @typedef {Schemas["AfterCompletion"]} AfterCompletion
 * @typedef {Partial<Schemas["Problem"]>} Problem
 */

/** The API's field names → the inputs that hold them (a 400 names the field to fix). */
const FIELDS = /** @type {Record<string, string>} */ ({
  "payment_method.number": "card-number",
  "payment_method.exp_month": "card-expiry",
  "payment_method.exp_year": "card-expiry",
  "payment_method.cvc": "card-cvc",
  "payment_method.holder": "card-holder",
  email: "card-email",
  "payment_method.iban": "sepa-iban",
  "payment_method.account_holder": "sepa-holder",
});

const BRAND_NAMES = /** @type {Record<string, string>} */ ({
  visa: "Visa",
  mastercard: "Mastercard",
  amex: "American Express",
  discover: "Discover",
  diners: "Diners Club",
  jcb: "JCB",
  unionpay: "UnionPay",
  maestro: "Maestro",
  elo: "Elo",
  hipercard: "Hipercard",
  mir: "Mir",
});

/**
 * @param {string} id
 * @returns {HTMLElement}
 */
function byId(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el;
}

/**
 * @param {string} id
 * @returns {HTMLInputElement}
 */
function input(id) {
  return /** @type {HTMLInputElement} */ (byId(id));
}

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string} [text]
 * @param {string} [className]
 * @returns {HTMLElementTagNameMap[K]}
 */
function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * A QR code of `text` as an inline SVG drawn with DOM calls (the page's CSP allows no data: image and no
 * inline style): dark modules as one path, on white, with the four-module quiet zone ISO/IEC 18004 asks
 * for, so a banking app's camera reads it. Medium error correction, as pix codes are printed.
 * @param {string} text
 * @param {string} label
 * @returns {SVGSVGElement}
 */
function qrCode(text, label) {
  const rows = encodeQR(text, "raw", { ecc: "medium", border: 4 });
  const size = rows.length;
  let d = "";
  rows.forEach((row, y) => {
    // Runs of dark modules in a row become one rectangle each.
    for (let x = 0; x < size; x++) {
      if (!row[x]) continue;
      let run = 1;
      while (x + run < size && row[x + run]) run++;
      d += `M${x} ${y}h${run}v1h-${run}z`;
      x += run - 1;
    }
  });
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", `0 0 ${size} ${size}`);
  svg.setAttribute("class", "qr");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", label);
  svg.setAttribute("shape-rendering", "crispEdges");
  const paper = document.createElementNS(SVG_NS, "rect");
  paper.setAttribute("width", String(size));
  paper.setAttribute("height", String(size));
  paper.setAttribute("fill", "#fff");
  const ink = document.createElementNS(SVG_NS, "path");
  ink.setAttribute("d", d);
  ink.setAttribute("fill", "#000");
  svg.append(paper, ink);
  return svg;
}

const root = document.getElementById("pay");
if (root) start(root);

/** @param {HTMLElement} root */
function start(root) {
  const payPath = root.dataset.payPath ?? "";
  const pageToken = root.dataset.pageToken ?? "";
  const amountText = root.dataset.amountText ?? "";
  const merchant = root.dataset.merchant ?? "";
  const lang = root.dataset.lang || undefined;
  const checkout = byId("checkout");
  const result = byId("result");
  const formError = byId("form-error");
  const panels = /** @type {HTMLFormElement[]} */ ([...root.querySelectorAll("form.panel")]);
  // The footer's line about what the payer hands over, one per method (pay.html).
  const footerLines = /** @type {HTMLElement[]} */ ([...root.querySelectorAll(".footer [data-method]")]);

  // Only one method's form shows at a time; the radios (a fieldset, so arrow keys move between them) pick it.
  for (const radio of /** @type {NodeListOf<HTMLInputElement>} */ (root.querySelectorAll('input[name="method"]'))) {
    radio.addEventListener("change", () => {
      for (const panel of panels) panel.hidden = panel.dataset.method !== radio.value;
      for (const line of footerLines) line.hidden = line.dataset.method !== radio.value;
      hideFormError();
    });
  }

  /**
   * Shows or clears the message under one field, wired to it for screen readers.
   * @param {string} id
   * @param {string | null} message
   */
  function setFieldError(id, message) {
    const field = input(id);
    const note = byId(`${id}-error`);
    note.textContent = message ?? "";
    note.hidden = message === null;
    if (message === null) field.removeAttribute("aria-invalid");
    else field.setAttribute("aria-invalid", "true");
  }

  /** @param {string} message */
  function showFormError(message) {
    formError.textContent = message;
    formError.hidden = false;
  }

  function hideFormError() {
    formError.hidden = true;
    formError.textContent = "";
  }

  // Card form: the number is grouped as it is typed and checked when the payer leaves a field.
  const number = document.getElementById("card-number");
  if (number instanceof HTMLInputElement) {
    number.addEventListener("input", () => {
      const atEnd = number.selectionStart === number.value.length;
      const formatted = formatCardNumber(number.value);
      if (atEnd && formatted !== number.value) number.value = formatted;
    });
    // The expiry takes its `MM / YY` shape as it is typed (validate.js formatExpiry).
    const expiry = input("card-expiry");
    let before = expiry.value;
    expiry.addEventListener("input", () => {
      const atEnd = expiry.selectionStart === expiry.value.length;
      const formatted = formatExpiry(expiry.value, before);
      if (atEnd && formatted !== expiry.value) expiry.value = formatted;
      before = expiry.value;
    });
    const checks = /** @type {[string, () => string | null][]} */ ([
      ["card-number", () => checkNumber(input("card-number").value)],
      ["card-expiry", () => expiryError()],
      ["card-cvc", () => checkCvc(input("card-cvc").value, cardBrand(digitsOf(input("card-number").value)))],
      ["card-holder", () => checkHolder(input("card-holder").value)],
      ["card-email", () => checkEmail(input("card-email").value)],
    ]);
    for (const [id, check] of checks) {
      const field = input(id);
      field.addEventListener("blur", () => {
        if (field.value !== "") setFieldError(id, check());
      });
      field.addEventListener("input", () => {
        if (field.getAttribute("aria-invalid") === "true") setFieldError(id, check());
      });
    }
    byId("panel-card").addEventListener("submit", (event) => {
      event.preventDefault();
      let first = null;
      for (const [id, check] of checks) {
        const message = check();
        setFieldError(id, message);
        if (message && first === null) first = id;
      }
      if (first !== null) {
        input(first).focus();
        return;
      }
      const expiry = /** @type {{ month: number, year: number }} */ (
        checkExpiry(input("card-expiry").value, new Date())
      );
      const email = input("card-email").value.trim();
      void pay(byId("panel-card"), {
        payment_method: {
          type: "card",
          number: digitsOf(input("card-number").value),
          exp_month: expiry.month,
          exp_year: expiry.year,
          cvc: input("card-cvc").value.trim(),
          holder: input("card-holder").value.trim(),
        },
        ...(email ? { email } : {}),
      });
    });
  }

  function expiryError() {
    const expiry = checkExpiry(input("card-expiry").value, new Date());
    return "error" in expiry ? expiry.error : null;
  }

  // Local methods: one button asks for the voucher, code or reference.
  for (const method of ["pix", "boleto", "oxxo", "spei"]) {
    const panel = document.getElementById(`panel-${method}`);
    panel?.addEventListener("submit", (event) => {
      event.preventDefault();
      void pay(panel, { payment_method: { type: method } });
    });
  }

  const sepa = document.getElementById("panel-sepa_debit");
  sepa?.addEventListener("submit", (event) => {
    event.preventDefault();
    const ibanError = checkIban(input("sepa-iban").value);
    const holderError = input("sepa-holder").value.trim() === "" ? "Enter the account holder's name." : null;
    setFieldError("sepa-iban", ibanError);
    setFieldError("sepa-holder", holderError);
    if (ibanError || holderError) {
      input(ibanError ? "sepa-iban" : "sepa-holder").focus();
      return;
    }
    void pay(sepa, {
      payment_method: {
        type: "sepa_debit",
        iban: input("sepa-iban").value.replace(/\s/g, "").toUpperCase(),
        account_holder: input("sepa-holder").value.trim(),
      },
    });
  });

  /**
   * Sends the payment once (a network failure is retried once with the same Idempotency-Key, so it
   * cannot be paid twice) and shows what happened.
   * @param {HTMLElement} panel
   * @param {Record<string, unknown>} body
   */
  async function pay(panel, body) {
    hideFormError();
    const button = /** @type {HTMLButtonElement} */ (panel.querySelector("button[type=submit]"));
    const label = button.textContent ?? "";
    button.disabled = true;
    button.textContent = "Processing…";
    panel.setAttribute("aria-busy", "true");
    const request = {
      method: "POST",
      headers: { "Content-Type": "application/json", "Idempotency-Key": crypto.randomUUID() },
      body: JSON.stringify({ page_token: pageToken, ...body }),
      credentials: /** @type {RequestCredentials} */ ("same-origin"),
    };
    try {
      let response;
      try {
        response = await fetch(payPath, request);
      } catch {
        response = await fetch(payPath, request);
      }
      await answer(response);
    } catch {
      showFormError("We could not reach the payment server. Check your connection and try again.");
    } finally {
      button.disabled = false;
      button.textContent = label;
      panel.removeAttribute("aria-busy");
    }
  }

  /** @param {Response} response */
  async function answer(response) {
    if (response.status === 201) {
      clearSecrets();
      showPayment(/** @type {Payment} */ (await response.json()));
      return;
    }
    /** @type {Problem} */
    let problem = {};
    try {
      problem = await response.json();
    } catch {
      // not a problem document: the generic message below
    }
    if (response.status === 400 && problem.param && FIELDS[problem.param]) {
      const id = /** @type {string} */ (FIELDS[problem.param]);
      setFieldError(
        id,
        problem.errors?.[0]?.message ? sentence(problem.errors[0].message) : (problem.detail ?? "Check this field."),
      );
      input(id).focus();
      return;
    }
    if (response.status === 403) {
      showFormError("This page has expired. Reload the page to pay.");
      return;
    }
    if (response.status === 404 || response.status === 409) {
      showNotice("This payment link is no longer taking payments", problem.detail ?? "Ask the seller for a new link.");
      return;
    }
    if (response.status === 429) {
      const wait = response.headers.get("Retry-After");
      showFormError(`Too many attempts. Wait ${wait ?? "a minute"} seconds and try again.`);
      return;
    }
    showFormError(
      response.status >= 500
        ? "Something went wrong on our side. Try again in a moment."
        : (problem.detail ?? "The payment could not be sent. Check the form and try again."),
    );
  }

  /**
   * A problem's message as a sentence for the payer: the API marks values and field names as code
   * (`123`), which the page shows as plain text.
   * @param {string} text
   */
  function sentence(text) {
    const trimmed = text.trim().replace(/`/g, "");
    return trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  }

  /** The card number and security code leave the page once answered: nothing keeps them. */
  function clearSecrets() {
    for (const id of ["card-number", "card-cvc", "sepa-iban"]) {
      const field = document.getElementById(id);
      if (field instanceof HTMLInputElement) field.value = "";
    }
  }

  /**
   * @param {string} title
   * @param {string} message
   */
  function showNotice(title, message) {
    clearSecrets();
    checkout.hidden = true;
    result.replaceChildren(el("h2", title), el("p", message));
    result.className = "result declined";
    result.hidden = false;
    result.focus();
  }

  /** @param {string} iso */
  function when(iso) {
    return new Date(iso).toLocaleString(lang, { dateStyle: "long", timeStyle: "short" });
  }

  /**
   * @param {HTMLDListElement} list
   * @param {string} term
   * @param {string | Node} value
   */
  function entry(list, term, value) {
    const dd = el("dd");
    if (typeof value === "string") dd.textContent = value;
    else dd.append(value);
    list.append(el("dt", term), dd);
  }

  /** @param {Payment} payment */
  function showPayment(payment) {
    const method = payment.payment_method;
    const paidWith =
      method.type === "card"
        ? `${BRAND_NAMES[method.brand ?? ""] ?? "Card"} ending in ${method.last4 ?? ""}`
        : method.type === "sepa_debit"
          ? `Direct debit from the account ending in ${method.last4 ?? ""}`
          : method.type.toUpperCase();
    const details = el("dl");
    /** @type {Node[]} */
    const parts = [];

    if (payment.status === "requires_action" && payment.next_action?.type === "redirect_to_url") {
      // 3-D Secure (docs/three-d-secure.md): the payer confirms at their bank's page, which sends them
      // back to this link's outcome page (/pay/{id}/return).
      result.className = "result pending";
      const url = payment.next_action.url ?? "";
      parts.push(el("h2", "Confirm with your bank"));
      parts.push(el("p", `Your bank asks you to confirm this payment of ${amountText}. Taking you there…`));
      const go = el("a", "Continue to your bank", "continue");
      go.href = url;
      parts.push(go);
      setTimeout(() => window.location.assign(url), 0);
    } else if (payment.status === "declined" || payment.status === "blocked") {
      result.className = "result declined";
      // Offer only what this link takes: another payment method only when it offers one.
      const card = method.type === "card";
      const others = panels.some((panel) => panel.dataset.method !== method.type);
      const next = card
        ? others
          ? "You can try another card, or pay another way."
          : "You can try another card."
        : others
          ? "You can try again, or pay another way."
          : "You can try again.";
      parts.push(el("h2", "Payment declined"));
      parts.push(el("p", payment.failure_message ?? "The payment was declined.", "decline-reason"));
      parts.push(el("p", `${paidWith}. Nothing was charged. ${next}`));
      entry(details, "Reference", payment.charge_id);
      parts.push(details);
      const again = el("button", card ? "Try another card" : "Try again", "secondary");
      again.type = "button";
      again.addEventListener("click", () => {
        result.hidden = true;
        checkout.hidden = false;
        const first = document.querySelector(
          "#checkout form.panel:not([hidden]) input, #checkout form.panel:not([hidden]) button",
        );
        if (first instanceof HTMLElement) first.focus();
      });
      parts.push(again);
    } else if (payment.status === "pending" && payment.next_action) {
      result.className = "result pending";
      const action = payment.next_action;
      if (action.type === "display_qr_code") {
        parts.push(el("h2", "Pay with pix"));
        parts.push(
          el("p", `Scan this pix code in your bank's app, or copy and paste it, before ${when(action.expires_at)}.`),
        );
        if (action.qr_payload) {
          const figure = el("figure", undefined, "qr-figure");
          figure.append(qrCode(action.qr_payload, `Pix QR code for ${amountText} to ${merchant}`));
          parts.push(figure);
        }
        const label = el("label", "Pix code (copy and paste)");
        label.htmlFor = "pix-payload";
        const code = el("textarea");
        code.id = "pix-payload";
        code.readOnly = true;
        code.value = action.qr_payload ?? "";
        const copy = el("button", "Copy the pix code", "secondary");
        copy.type = "button";
        copy.addEventListener("click", async () => {
          code.select();
          try {
            await navigator.clipboard.writeText(code.value);
            copy.textContent = "Copied";
          } catch {
            copy.textContent = "Select the code and copy it";
          }
        });
        parts.push(label, code, copy);
      } else if (action.type === "display_voucher") {
        parts.push(el("h2", "Your voucher"));
        parts.push(el("p", `Pay ${amountText} with this reference before ${when(action.expires_at)}.`));
      } else if (action.type === "bank_transfer") {
        parts.push(el("h2", "Transfer details"));
        parts.push(el("p", `Send ${amountText} by SPEI with this reference before ${when(action.expires_at)}.`));
      } else {
        parts.push(el("h2", "Direct debit set up"));
        parts.push(el("p", `${merchant} will debit ${amountText} from your account. Keep this mandate reference.`));
      }
      entry(details, "Reference", el("code", action.reference));
      entry(details, "Receipt reference", payment.charge_id);
      parts.push(details);
      parts.push(...afterCompletion(payment.after_completion, false));
    } else {
      result.className = "result success";
      const held = payment.status === "authorized";
      parts.push(el("h2", held ? "Payment accepted" : "Payment received"));
      parts.push(
        el(
          "p",
          held
            ? `Your payment of ${amountText} to ${merchant} was accepted and is being reviewed.`
            : `You paid ${amountText} to ${merchant}.`,
        ),
      );
      entry(details, "Receipt reference", payment.charge_id);
      entry(details, "Paid with", paidWith);
      entry(details, "Amount", amountText);
      parts.push(details);
      parts.push(...afterCompletion(payment.after_completion, true));
    }

    checkout.hidden = true;
    result.replaceChildren(...parts);
    result.hidden = false;
    result.focus();
  }

  /**
   * The merchant's message, or a link to where the merchant sends payers next (followed after a few
   * seconds once the payment is complete).
   * @param {AfterCompletion | null} after
   * @param {boolean} complete
   * @returns {Node[]}
   */
  function afterCompletion(after, complete) {
    if (!after) return [];
    if (after.type === "message") return [el("p", after.message, "after-message")];
    let target;
    try {
      target = new URL(after.url);
    } catch {
      return [];
    }
    if (target.protocol !== "https:" && target.protocol !== "http:") return [];
    const link = el("a", `Continue to ${target.host}`, "continue");
    link.href = target.href;
    if (complete) setTimeout(() => window.location.assign(target.href), 4000);
    return [el("p", complete ? "Taking you back to the seller in a few seconds…" : ""), link];
  }
}
