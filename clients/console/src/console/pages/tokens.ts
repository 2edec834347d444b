import { need } from "../api.ts";
import { type Ctx, cardLabel, type PageDef, pageHeader, type Route, time } from "../app.ts";
import { announce, button, confirmDialog, details, errorBox, field, h } from "../ui.ts";

// The vault (scope `vault`): look a token up by its id and delete it. The API has no list of tokens.
// Tokenizing and revealing are left to the API on purpose: a card number never passes through, or is
// shown in, the console.

async function tokenDetail(ctx: Ctx, id: string): Promise<HTMLElement> {
  const errors = errorBox();
  try {
    const t = need(await ctx.api.GET("/v1/tokens/{id}", { params: { path: { id } } }));
    errors.show(null);
    return h(
      "section",
      { "aria-label": "Token" },
      h("h2", null, h("code", null, t.id)),
      details([
        ["Card", [cardLabel(t.card.brand, t.card.last4), ` (first four ${t.card.first4})`]],
        ["Expiry", `${String(t.card.exp_month).padStart(2, "0")}/${t.card.exp_year}`],
        ["Holder", t.holder],
        ["Fingerprint", h("code", null, t.card.fingerprint)],
        ["Created", time(t.created_at)],
      ]),
      ctx.can("deleteToken")
        ? button(
            "Delete token",
            async () => {
              if (
                !(await confirmDialog(
                  "Delete this token?",
                  h("p", null, "Its card number is erased and can never be recovered or charged again."),
                  "Delete token",
                ))
              )
                return;
              try {
                need(await ctx.api.DELETE("/v1/tokens/{id}", { params: { path: { id } } }));
                announce("Token deleted");
                ctx.go("tokens");
              } catch (error) {
                errors.show(error instanceof Error ? error.message : String(error));
              }
            },
            "danger",
          )
        : null,
      errors.el,
    );
  } catch (error) {
    errors.show(error instanceof Error ? error.message : String(error));
    return errors.el;
  }
}

export const tokensPage: PageDef = {
  path: "tokens",
  title: "Tokens",
  needs: ["getToken"],
  async render(ctx: Ctx, route: Route) {
    const id = route.segments[1];
    const input = h("input", {
      name: "id",
      required: true,
      placeholder: "tok_…",
      value: id ?? "",
      autocomplete: "off",
      spellcheck: "false",
    });
    const form = h(
      "form",
      { class: "inline-form", role: "search", "aria-label": "Look up a token" },
      field("Token id", input),
      h("button", { type: "submit", class: "btn primary" }, "Look up"),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (input.value.trim()) ctx.go(`tokens/${encodeURIComponent(input.value.trim())}`);
    });
    return h(
      "div",
      null,
      pageHeader("Tokens"),
      h(
        "p",
        { class: "muted" },
        "Cards are tokenized through the API (POST /v1/tokens); the console never handles a card number.",
      ),
      form,
      id ? await tokenDetail(ctx, id) : null,
    );
  },
};
