import { type Child, h, newUid, select } from "./ui.ts";

// Every list in the console is an API list: newest first, `limit`, the `starting_after` /
// `ending_before` cursors and the operation's own filters, all kept in the page's address
// (`#/charges?status=captured&starting_after=tx_…`), so reloading or going back shows the same page.

export interface Column<T> {
  header: string;
  cell: (row: T) => Child;
  /** The row's header cell (its name or id), for screen readers. */
  rowHeader?: boolean;
}

export interface Filter {
  name: string;
  label: string;
  /** Choices for a select ([value, label]); a text input without. */
  options?: [string, string][];
  placeholder?: string;
  /** A date picker (`YYYY-MM-DD`) instead of a text input (the balance transactions' created range). */
  type?: "date";
}

/**
 * More about a row than its columns hold (a webhook delivery's attempts): a toggle in the row's last
 * cell shows it in a row of its own, the table's full width, below, rather than a table nested in a
 * narrow cell that pushes the columns beside it off-screen.
 */
export interface RowDetail<T> {
  header: string;
  /** The toggle's text (`Attempts (3)`). */
  label: (row: T) => string;
  content: (row: T) => Child;
}

export interface ListSpec<T extends { id: string }> {
  caption: string;
  columns: Column<T>[];
  detail?: RowDetail<T>;
  filters?: Filter[];
  /** Loads one page for the given query (filters and cursor). */
  load(query: Record<string, string>): Promise<{ data: T[]; has_more: boolean }>;
  empty: string;
  /** The address to go to with a new query (the page's own route). */
  navigate(query: Record<string, string>): void;
  query: URLSearchParams;
  pageSize?: number;
}

const CURSORS = ["starting_after", "ending_before"];

/** Renders a filter form, a table and the Newer/Older cursor buttons; returns the container. */
export function listView<T extends { id: string }>(spec: ListSpec<T>): HTMLElement {
  const filters = spec.filters ?? [];
  const current: Record<string, string> = {};
  for (const [k, v] of spec.query) if (v !== "") current[k] = v;
  const filterValues = Object.fromEntries(filters.map((f) => [f.name, current[f.name] ?? ""]));

  const container = h("section", { class: "list", "aria-label": spec.caption });
  if (filters.length > 0) {
    const form = h("form", { class: "filters", role: "search", "aria-label": `Filter ${spec.caption.toLowerCase()}` });
    for (const f of filters) {
      const id = newUid("filter");
      const control = f.options
        ? select(f.name, [["", "Any"], ...f.options], filterValues[f.name])
        : h("input", {
            name: f.name,
            type: f.type ?? "search",
            value: filterValues[f.name],
            placeholder: f.placeholder ?? "",
            spellcheck: "false",
          });
      control.id = id;
      form.append(h("div", { class: "field inline" }, h("label", { for: id }, f.label), control));
    }
    form.append(h("button", { type: "submit", class: "btn" }, "Apply filters"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const data = new FormData(form);
      const query: Record<string, string> = {};
      for (const f of filters) {
        const v = String(data.get(f.name) ?? "").trim();
        if (v) query[f.name] = v;
      }
      spec.navigate(query);
    });
    container.append(form);
  }

  const status = h("p", { class: "muted", "aria-live": "polite" }, "Loading…");
  container.append(status);
  // Focusable, so a table wider than a phone's screen can be scrolled from the keyboard.
  const body = h("div", { class: "table-wrap", role: "region", "aria-label": `${spec.caption} table`, tabindex: 0 });
  container.append(body);

  const query: Record<string, string> = { ...current, limit: String(spec.pageSize ?? 20) };
  spec
    .load(query)
    .then((page) => {
      status.textContent = "";
      if (page.data.length === 0) {
        status.textContent = spec.empty;
      }
      if (page.data.length > 0) body.append(table(spec.caption, spec.columns, page.data, spec.detail));
      const base = Object.fromEntries(Object.entries(current).filter(([k]) => !CURSORS.includes(k)));
      const first = page.data[0];
      const last = page.data[page.data.length - 1];
      // has_more speaks of the cursor's direction: older for starting_after (and no cursor), newer for ending_before.
      const hasNewer = current.starting_after !== undefined || (current.ending_before !== undefined && page.has_more);
      const hasOlder = current.ending_before !== undefined || page.has_more;
      const nav = h("nav", { class: "pager", "aria-label": `${spec.caption} pages` });
      if (hasNewer || hasOlder) {
        nav.append(
          h(
            "button",
            {
              type: "button",
              class: "btn",
              disabled: !hasNewer || !first,
              onclick: () => first && spec.navigate({ ...base, ending_before: first.id }),
            },
            "← Newer",
          ),
          h(
            "button",
            {
              type: "button",
              class: "btn",
              disabled: !hasOlder || !last,
              onclick: () => last && spec.navigate({ ...base, starting_after: last.id }),
            },
            "Older →",
          ),
        );
      }
      if (current.starting_after || current.ending_before) {
        nav.append(h("button", { type: "button", class: "btn link", onclick: () => spec.navigate(base) }, "Newest"));
      }
      if (nav.childElementCount > 0) container.append(nav);
    })
    .catch((error: unknown) => {
      status.textContent = "";
      container.append(
        h("div", { class: "error-box", role: "alert" }, error instanceof Error ? error.message : String(error)),
      );
    });
  return container;
}

export function table<T>(caption: string, columns: Column<T>[], rows: T[], detail?: RowDetail<T>): HTMLTableElement {
  const width = columns.length + (detail ? 1 : 0);
  const rowsOf = (row: T): HTMLTableRowElement[] => {
    const cells = columns.map((c) =>
      c.rowHeader ? h("th", { scope: "row" }, c.cell(row)) : h("td", null, c.cell(row)),
    );
    if (!detail) return [h("tr", null, cells)];
    const more = h(
      "tr",
      { class: "detail-row", id: newUid("row"), hidden: true },
      h("td", { colspan: width }, detail.content(row)),
    );
    const toggle = h(
      "button",
      {
        type: "button",
        class: "btn link toggle",
        "aria-expanded": "false",
        "aria-controls": more.id,
        onclick: () => {
          const open = toggle.getAttribute("aria-expanded") !== "true";
          toggle.setAttribute("aria-expanded", String(open));
          more.hidden = !open;
        },
      },
      detail.label(row),
    );
    return [h("tr", null, cells, h("td", null, toggle)), more];
  };
  return h(
    "table",
    null,
    h("caption", { class: "visually-hidden" }, caption),
    h(
      "thead",
      null,
      h(
        "tr",
        null,
        columns.map((c) => h("th", { scope: "col" }, c.header)),
        detail ? h("th", { scope: "col" }, detail.header) : null,
      ),
    ),
    h("tbody", null, rows.flatMap(rowsOf)),
  );
}
