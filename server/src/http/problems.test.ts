import document from "@payments/contract/openapi.3.1.json" with { type: "json" };
import { describe, expect, it } from "vitest";
import type { OpenApiDocument } from "./contract.ts";
import { contractStatuses, errorReferenceHtml } from "./pages.ts";
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
    for (const code of Object.keys(PROBLEM_TYPES)) {
      expect(html).toContain(`id="${code}"`);
      // The type a problem of this code has on this server: a link, not a `<base URL>` placeholder.
      expect(html).toContain(`type: <code>https://pay.example.com/docs/errors#${code}</code>`);
    }
    expect(html).not.toContain("base URL");
    // Markup in the table's prose is escaped; only `code` spans become elements.
    expect(html).not.toMatch(/<script/i);
  });

  it("gives each code the statuses the contract answers it with, and no status where no operation answers it", () => {
    const statuses = contractStatuses(document as unknown as OpenApiDocument);
    // From the contract's problem examples and response descriptions.
    expect(statuses.get("invalid_request")).toEqual([400]);
    expect(statuses.get("insufficient_balance")).toEqual([422]);
    expect(statuses.get("idempotency_replay_unavailable")).toEqual([409]);
    // No response of its own: the server's status, which operations declare.
    expect(statuses.get("conflict")).toEqual([409]);
    // No operation answers a problem with these: a declined card is a charge's failure_code, and a
    // method a path does not have is no operation.
    expect(statuses.get("card_declined")).toEqual([]);
    expect(statuses.get("method_not_allowed")).toEqual([]);
    // What the server answers a code with is what the contract says, wherever the contract says it.
    for (const [code, t] of Object.entries(PROBLEM_TYPES)) {
      const said = statuses.get(code as keyof typeof PROBLEM_TYPES) ?? [];
      if (said.length > 0) expect(said, code).toContain(t.status);
    }
    const html = errorReferenceHtml("https://pay.example.com");
    expect(html).toMatch(/<code>insufficient_balance<\/code><\/a> <span class="status">422<\/span>/);
    expect(html).not.toContain('<span class="status">402</span>');
    const unanswered = html.slice(html.indexOf('id="no-operation"'));
    expect(unanswered).toContain('id="card_declined"');
    expect(unanswered).toContain('id="method_not_allowed"');
    expect(unanswered).not.toContain('id="not_found"');
  });

  it("reads the statuses from the document it is given (a code an operation's 402 example carries)", () => {
    const doc = {
      openapi: "3.1.0",
      components: { securitySchemes: {} },
      paths: {
        "/v1/x": {
          post: {
            operationId: "x",
            responses: {
              "402": {
                content: { "application/problem+json": { examples: { d: { value: { code: "card_declined" } } } } },
              },
              "409": { description: "Changed meanwhile (`conflict`)." },
            },
          },
        },
      },
    } as unknown as OpenApiDocument;
    const statuses = contractStatuses(doc);
    expect(statuses.get("card_declined")).toEqual([402]);
    expect(statuses.get("conflict")).toEqual([409]);
    expect(statuses.get("invalid_request")).toEqual([]);
  });
});
