import { ApiError, describeError, fieldProblems } from "./api.ts";

// A few DOM helpers. Every page is built with them and never with innerHTML, so text from the API
// (names, descriptions, paths) is always text, and the page runs under a CSP without inline code.

export type Child = Node | string | number | null | undefined | false | Child[];

type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

/** An element with attributes (`on<event>` ones become listeners; `false`/`null` ones are left out) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      el.addEventListener(name.slice(2), value);
    } else if (name === "value" && "value" in el) {
      (el as HTMLInputElement).value = String(value);
    } else if (name === "checked" && "checked" in el) {
      (el as HTMLInputElement).checked = Boolean(value);
    } else {
      el.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
}

let uid = 0;
/** A fresh element id, for labels and descriptions. */
export const newUid = (prefix: string) => `${prefix}-${++uid}`;

/** A labelled form field. */
export function field(
  label: string,
  control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement,
  hint?: string,
): HTMLElement {
  control.id ||= newUid("f");
  const hintEl = hint ? h("p", { class: "hint", id: `${control.id}-hint` }, hint) : null;
  if (hintEl) control.setAttribute("aria-describedby", hintEl.id);
  return h("div", { class: "field" }, h("label", { for: control.id }, label), control, hintEl);
}

/** A <select> of options `[value, label]`, with `selected` chosen. */
export function select(name: string, options: [string, string][], selected?: string): HTMLSelectElement {
  return h(
    "select",
    { name },
    options.map(([value, label]) => h("option", { value, selected: value === selected }, label)),
  );
}

/** A button; `kind` picks its look (`primary`, `danger`, plain). */
export function button(
  label: string,
  onclick: (event: Event) => void,
  kind?: "primary" | "danger" | "link",
): HTMLButtonElement {
  return h("button", { type: "button", class: kind ? `btn ${kind}` : "btn", onclick: onclick as EventListener }, label);
}

/** A status badge. */
export function badge(text: string, tone: "ok" | "warn" | "bad" | "muted" | "info" = "muted"): HTMLElement {
  return h("span", { class: `badge ${tone}` }, text);
}

/** Live region for short messages ("Copied", "Key revoked"). */
export function announce(message: string): void {
  const region = document.getElementById("announcer");
  if (!region) return;
  region.textContent = "";
  // A separate task, so repeating the same message is announced again.
  setTimeout(() => {
    region.textContent = message;
  }, 30);
}

/**
 * A modal dialog (native <dialog>: focus moves into it and Escape closes it). `build` receives a
 * `close` function; the dialog is removed from the page when closed.
 */
export function openDialog(
  title: string,
  build: (close: () => void) => Child[],
  options: { wide?: boolean } = {},
): HTMLDialogElement {
  const titleId = newUid("dlg");
  const dialog = h("dialog", { "aria-labelledby": titleId, class: options.wide ? "wide" : null });
  const close = () => dialog.close();
  dialog.addEventListener("close", () => {
    dialog.remove();
    opener?.focus();
  });
  const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  append(dialog, [h("h2", { id: titleId }, title), ...build(close)]);
  document.body.appendChild(dialog);
  dialog.showModal();
  return dialog;
}

/** Asks for confirmation; resolves true when the holder confirms. */
export function confirmDialog(title: string, message: Child, confirmLabel: string): Promise<boolean> {
  return new Promise((resolve) => {
    let confirmed = false;
    const dialog = openDialog(title, (close) => [
      h("div", { class: "dialog-body" }, message),
      h(
        "div",
        { class: "actions" },
        button("Cancel", close),
        button(
          confirmLabel,
          () => {
            confirmed = true;
            close();
          },
          "danger",
        ),
      ),
    ]);
    dialog.addEventListener("close", () => resolve(confirmed));
  });
}

/**
 * What a form dialog's button runs, given the dialog's `close`: it returns a message to show in the error
 * box (a check before any request) or undefined, and throws the API's problem.
 */
type FormAction = (close: () => void) => string | undefined | Promise<string | undefined>;

/**
 * A dialog holding one form: its error box, `body`, then Cancel, `other` (a second way to finish, such as
 * the webhook chaos dialog's "Turn off", which sends without the browser's checks of the fields) and the
 * submit button (`tone`: its look). Submit runs `submit`, `other` its `run`; a message either returns is
 * shown in the box, and an error either throws there too and beside each field the problem names
 * (showFormError; a control says which body field it sends with `data-param`). The one shape of the
 * console's create, edit, rotate and open dialogs; `wide` for a long form.
 */
export function formDialog(
  title: string,
  options: {
    body: Child[];
    submitLabel: string;
    tone?: "primary" | "danger";
    wide?: boolean;
    other?: { label: string; tone?: "primary" | "danger"; run: FormAction };
    submit: FormAction;
  },
): HTMLDialogElement {
  const errors = errorBox();
  errors.show(null);
  return openDialog(
    title,
    (close) => {
      const attempt = async (action: FormAction) => {
        clearFieldErrors(form);
        errors.show(null);
        try {
          const refused = await action(close);
          if (refused !== undefined) errors.show(refused);
        } catch (error) {
          showFormError(form, errors, error);
        }
      };
      const other = options.other;
      const form = h(
        "form",
        null,
        errors.el,
        options.body,
        h(
          "div",
          { class: "actions" },
          button("Cancel", close),
          other ? button(other.label, () => void attempt(other.run), other.tone) : null,
          h("button", { type: "submit", class: `btn ${options.tone ?? "primary"}` }, options.submitLabel),
        ),
      );
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        void attempt(options.submit);
      });
      return [form];
    },
    { wide: options.wide },
  );
}

/**
 * The field a service key's secret is pasted into (sign-in, opening a sandbox): masked, and neither
 * autocompleted nor spell-checked, so the browser neither keeps nor sends it anywhere.
 */
export function keyInput(attrs: Attrs = {}): HTMLInputElement {
  return h("input", {
    name: "key",
    type: "password",
    required: true,
    autocomplete: "off",
    spellcheck: "false",
    placeholder: "key_test_…",
    ...attrs,
  });
}

/** A region that shows an API problem (or any failure) next to what caused it. */
export function errorBox(): { el: HTMLElement; show(message: string | null): void } {
  const el = h("div", { class: "error-box", role: "alert" });
  return {
    el,
    show(message) {
      el.textContent = message ?? "";
      el.hidden = !message;
    },
  };
}

/** Removes what showFormError marked in a form. */
export function clearFieldErrors(form: HTMLElement): void {
  for (const note of form.querySelectorAll(".field-error")) note.remove();
  for (const el of form.querySelectorAll<HTMLElement>("[data-param]")) {
    el.removeAttribute("aria-invalid");
    const before = el.dataset.describedby;
    if (before) el.setAttribute("aria-describedby", before);
    else el.removeAttribute("aria-describedby");
  }
}

/**
 * Shows why a form's request failed: the API's problem in the form's error box, and beside each control
 * the problem names the message for it. A control says which body field it sends with `data-param`
 * (`destination.iban`); the box names the field by its label and that path. Only the controls the form
 * shows count (a cashout form hides the fields of the destination kinds not chosen); a problem naming
 * none of them is shown whole. Focus moves to the first control at fault.
 */
export function showFormError(form: HTMLElement, box: { show(message: string | null): void }, error: unknown): void {
  clearFieldErrors(form);
  const controls = new Map<string, HTMLElement>();
  for (const el of form.querySelectorAll<HTMLElement>("[data-param]")) {
    const off = el.closest("[hidden]") !== null || (el as HTMLInputElement).disabled === true;
    if (!off && el.dataset.param && !controls.has(el.dataset.param)) controls.set(el.dataset.param, el);
  }
  const problem = error instanceof ApiError ? error.problem : undefined;
  const named = problem ? fieldProblems(problem, (param) => controls.has(param)) : [];
  if (!problem || named.length === 0) {
    box.show(error instanceof Error ? error.message : describeError(error));
    return;
  }
  const labelOf = (el: HTMLElement) =>
    (el.tagName === "FIELDSET"
      ? el.querySelector("legend")?.textContent
      : el.id
        ? form.querySelector(`label[for="${el.id}"]`)?.textContent
        : null
    )?.trim() ?? "";
  const lines: string[] = [];
  let first: HTMLElement | null = null;
  for (const { param, message } of named) {
    const el = controls.get(param) as HTMLElement;
    const label = labelOf(el);
    lines.push(`${label ? `${label} (${param})` : param}: ${message}`);
    const note = h("p", { class: "field-error", id: newUid("err") }, message);
    if (el.tagName === "FIELDSET") el.append(note);
    else (el.closest(".field") ?? el.parentElement ?? form).append(note);
    if (el.dataset.describedby === undefined) el.dataset.describedby = el.getAttribute("aria-describedby") ?? "";
    el.setAttribute("aria-describedby", [el.dataset.describedby, note.id].filter(Boolean).join(" "));
    // aria-invalid belongs on the control; a fieldset (a group of checkboxes) gets the message only.
    if (el.tagName !== "FIELDSET") el.setAttribute("aria-invalid", "true");
    first ??= el.tagName === "FIELDSET" ? el.querySelector<HTMLElement>("input") : el;
  }
  const id = problem.request_id ? ` (request ${problem.request_id})` : "";
  box.show(`${problem.title}: ${lines.join("; ")}${id}`);
  first?.focus();
}

/** A definition list of `[term, value]` pairs. */
export function details(rows: [string, Child][]): HTMLElement {
  return h(
    "dl",
    { class: "details" },
    rows.map(([term, value]) => [h("dt", null, term), h("dd", null, value)]),
  );
}

/** Pretty JSON, as text. */
export function jsonBlock(value: unknown, label: string): HTMLElement {
  return h("pre", { class: "json", tabindex: 0, "aria-label": label }, JSON.stringify(value, null, 2));
}
