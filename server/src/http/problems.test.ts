import document from "@payments/contract/openapi.3.1.json" with { type: "json" };
import { describe, expect, it } from "vitest";
import { errorReferenceHtml } from "./pages.ts";
import { PROBLEM_TYPES, problem, problemTypeUri } from "./problems.ts";

describe("the error table", () => {
  it("has an entry, with a meaning, for exactly the codes the contract's ErrorCode lists", () => {
    const schema = document.components.schemas.ErrorCode as { anyOf: { enum?: string[] }[] };
    const known = schema.anyOf[0]?.enum ?? [];
    expect(Object.keys(PROBLEM_TYPES).sort()).toEqual([...known].sort());
    for (const [code, t] of Object.entries(PROBLEM_TYPES)) {
      expect(t.meaning.length, code).toBeGreaterThan(20);
      expect(t.status, code).toBeGreaterThanOrEqual(400);
    }
  });

  it("types each problem with its entry of the error reference, which lists every code under its anchor", () => {
    expect(problem("not_found", "x").type).toBe("/docs/errors#not_found");
    expect(problemTypeUri("https://pay.example.com", "rate_limited")).toBe(
      "https://pay.example.com/docs/errors#rate_limited",
    );
    const html = errorReferenceHtml("https://pay.example.com");
    for (const [code, t] of Object.entries(PROBLEM_TYPES)) {
      expect(html).toContain(`id="${code}"`);
      expect(html).toContain(`<span class="status">${t.status}</span>`);
      // The type a problem of this code has on this server: a link, not a `<base URL>` placeholder.
      expect(html).toContain(`type: <code>https://pay.example.com/docs/errors#${code}</code>`);
    }
    expect(html).not.toContain("base URL");
    // Markup in the table's prose is escaped; only `code` spans become elements.
    expect(html).not.toMatch(/<script/i);
  });
});
