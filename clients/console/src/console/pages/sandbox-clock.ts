import type { components } from "@payments/client";
import { need } from "../api.ts";
import { type Ctx, type PageDef, pageHeader, setSandboxNow } from "../app.ts";
import { durationText, exactTime } from "../format.ts";
import { announce, button, details, errorBox, field, h, showFormError } from "../ui.ts";

// The sandbox clock (GET /v1/sandbox/clock, POST /v1/sandbox/clock/advance and /reset; scope `*`, sandbox
// only): the sandbox's time and offset, moving it forward, with what each advance ran (docs/sandbox-clock.md
// "How an advance runs"), and back to the server's time ("Resetting the clock").

type Clock = components["schemas"]["SandboxClock"];
type Advance = components["schemas"]["SandboxClockAdvance"];

const HOUR = 3600;
const DAY = 86_400;

/** What an advance ran, in words, kinds with nothing left out. */
function ranRows(ran: Advance["ran"]): [string, string][] {
  const rows: [string, number][] = [
    ["Balances settled", ran.balances_settled],
    ["Local payments expired", ran.charges_expired],
    ["Fraud reviews expired", ran.reviews_expired],
    ["Cashouts sent", ran.cashouts_sent],
    ["Cashouts paid or failed", ran.cashouts_finished],
    ["Payment links expired", ran.payment_links_expired],
    ["Webhook attempts", ran.webhook_attempts],
  ];
  const done = rows.filter(([, n]) => n > 0).map(([label, n]): [string, string] => [label, String(n)]);
  return done.length > 0 ? done : [["Nothing", "was due"]];
}

function offsetText(seconds: number): string {
  if (seconds === 0) return "none: the sandbox runs on the server's time";
  const days = Math.floor(seconds / DAY);
  const hours = Math.floor((seconds % DAY) / HOUR);
  const minutes = Math.floor((seconds % HOUR) / 60);
  return `${days} d ${hours} h ${minutes} min ahead of the server's time`;
}

/** A sandbox time as it is: exact, in UTC (relative to itself, the sandbox's now would say nothing). */
const exact = (iso: string) => h("time", { datetime: iso }, exactTime(iso));

/** The clock's rows: its time, and how far it runs ahead of the server's. */
function clockRows(clock: Clock): [string, HTMLElement | string][] {
  return [
    ["Sandbox time", exact(clock.now)],
    ["Offset", offsetText(clock.offset_seconds)],
  ];
}

export const sandboxClockPage: PageDef = {
  path: "clock",
  title: "Sandbox clock",
  needs: ["getSandboxClock"],
  sandboxOnly: true,
  async render(ctx: Ctx) {
    const clock: Clock = need(await ctx.api.GET("/v1/sandbox/clock"));
    setSandboxNow(clock.now);
    // Replaced after each advance with the clock the answer carries (SandboxClockAdvance.clock).
    const shown = h("div", null, details(clockRows(clock)));
    const result = h("div", { "aria-live": "polite" });
    const errors = errorBox();
    const days = h("input", {
      name: "days",
      type: "number",
      min: 1,
      max: 366,
      step: 1,
      value: 2,
      inputmode: "numeric",
    });
    const form = h("form", { class: "inline-form" });

    async function advance(seconds: number) {
      errors.show(null);
      const { data, error } = await ctx.api.POST("/v1/sandbox/clock/advance", { body: { seconds } });
      if (error || !data) {
        showFormError(form, errors, error);
        return;
      }
      setSandboxNow(data.clock.now);
      shown.replaceChildren(details(clockRows(data.clock)));
      announce("Sandbox clock advanced");
      const moved = (Date.parse(data.clock.now) - Date.parse(data.from)) / 1000;
      result.replaceChildren(
        h("h2", null, "What ran"),
        details([
          ["From", exact(data.from)],
          ["To", exact(data.clock.now)],
          ["Moved by", durationText(moved)],
          ...ranRows(data.ran),
        ]),
      );
    }

    async function reset() {
      errors.show(null);
      const { data, error } = await ctx.api.POST("/v1/sandbox/clock/reset", {});
      if (error || !data) {
        showFormError(form, errors, error);
        return;
      }
      setSandboxNow(data.now);
      shown.replaceChildren(details(clockRows(data)));
      announce("Sandbox clock reset to the server's time");
      result.replaceChildren(
        h(
          "p",
          { class: "muted" },
          "Back on the server's time. What was made on the advanced clock keeps its times; what it was due to do runs when the clock reaches them again.",
        ),
      );
    }

    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const n = Number(days.value);
      if (Number.isInteger(n) && n >= 1 && n <= 366) void advance(n * DAY);
      else errors.show("Days: a whole number from 1 to 366.");
    });
    form.append(
      field("Days", days, "Moves the sandbox's time forward; only a reset takes it back."),
      h("button", { type: "submit", class: "btn primary" }, "Advance"),
    );

    return h(
      "div",
      null,
      pageHeader(
        "Sandbox clock",
        button("Refresh", () => ctx.refresh()),
      ),
      h(
        "p",
        { class: "muted" },
        "Everything in the sandbox runs on this clock. Advancing it runs what became due on the way, in order: settlements, expiries, review windows, cashouts, payment links and webhook retries. Production's time never moves.",
      ),
      shown,
      ctx.can("advanceSandboxClock")
        ? h(
            "div",
            { class: "actions" },
            button("+1 hour", () => void advance(HOUR)),
            button("+1 day", () => void advance(DAY)),
            button("+1 week", () => void advance(7 * DAY)),
            ctx.can("resetSandboxClock") && clock.offset_seconds > 0
              ? button("Back to real time", () => void reset())
              : null,
          )
        : null,
      ctx.can("advanceSandboxClock") ? form : null,
      errors.el,
      result,
    );
  },
};
