import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import document from "@payments/contract/openapi.3.1.json" with { type: "json" };
import { describe, expect, it } from "vitest";

// Use-case inputs come from the contract (issue 29): a request body's type is
// `components["schemas"][…]` (or Pick/Omit/& of it), never a hand-written interface with the same fields,
// which would compile on and silently drop a field the spec gains. This scans the domain's sources for
// such a twin: an interface or object type whose fields are (almost) all of a request schema's and nothing
// else.

interface SchemaObject {
  properties?: Record<string, unknown>;
}

/** Request bodies, and the `…Input` schemas they are made of, with their field names. */
function requestSchemas(): Map<string, Set<string>> {
  const schemas = document.components.schemas as Record<string, SchemaObject>;
  const names = new Set(Object.keys(schemas).filter((name) => name.endsWith("Input")));
  for (const path of Object.values(document.paths) as Record<string, unknown>[]) {
    for (const operation of Object.values(path) as { requestBody?: unknown }[]) {
      const ref = JSON.stringify(operation.requestBody ?? {}).match(/#\/components\/schemas\/(\w+)/);
      if (ref?.[1]) names.add(ref[1]);
    }
  }
  const result = new Map<string, Set<string>>();
  for (const name of names) {
    const properties = Object.keys(schemas[name]?.properties ?? {});
    if (properties.length >= 2) result.set(name, new Set(properties));
  }
  return result;
}

/** Hand-written object types in `source`: interfaces and `type X = { … }`, with their top-level field names. */
export function objectTypes(source: string): { name: string; fields: Set<string> }[] {
  const found: { name: string; fields: Set<string> }[] = [];
  for (const match of source.matchAll(
    /^(?:export )?(?:interface (\w+)[^{\n]*|type (\w+)(?:<[^>\n]*>)? =) \{\n([\s\S]*?)\n\}/gm,
  )) {
    const fields = new Set([...(match[3] ?? "").matchAll(/^ {2}(?:readonly )?(\w+)\??:/gm)].map((f) => f[1] ?? ""));
    found.push({ name: match[1] ?? match[2] ?? "", fields });
  }
  return found;
}

/** The request schema `fields` twins, if any: all its fields but at most one, and none of its own. */
export function twinOf(fields: Set<string>, schemas: Map<string, Set<string>>): string | null {
  for (const [name, schema] of schemas) {
    const own = [...fields].filter((f) => !schema.has(f));
    if (own.length === 0 && fields.size >= 2 && fields.size >= schema.size - 1) return name;
  }
  return null;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") && !entry.name.includes(".test") ? [path] : [];
  });
}

describe("use-case inputs are the contract's types", () => {
  const schemas = requestSchemas();

  it("finds the request schemas to compare with", () => {
    expect(schemas.get("ChargeCreate")).toContain("payment_method");
    expect(schemas.get("SandboxClockAdvanceRequest")).toEqual(new Set(["seconds", "to"]));
  });

  it("catches a hand-written twin (fixture: the ChargeCreate and CardInput this replaced)", () => {
    const fixture = [
      "export interface ChargeCreate {",
      "  merchant_id: string;",
      "  amount: number;",
      "  currency: string;",
      "  payment_method: PaymentMethodInput;",
      "  capture?: boolean | undefined;",
      "  description?: string | undefined;",
      "  metadata?: Record<string, string> | undefined;",
      "  customer?: { email?: string; ip?: string; country?: string } | undefined;",
      // The fields ChargeCreate gained since (3-D Secure): a twin copies all of them.
      "  payment_method_options?: { card?: { request_three_d_secure?: string } } | undefined;",
      "  return_url?: string | undefined;",
      "}",
      "type CardInput = {",
      "  card: string;",
      "  exp_month: number;",
      "  exp_year: number;",
      "  cvc?: string | undefined;",
      "};",
    ].join("\n");
    expect(objectTypes(fixture).map((t) => [t.name, twinOf(t.fields, schemas)])).toEqual([
      ["ChargeCreate", "ChargeCreate"],
      ["CardInput", "TokenCreate"],
    ]);
  });

  it("leaves none in server/src/domain", () => {
    const root = new URL(".", import.meta.url).pathname;
    const twins = sources(root).flatMap((file) =>
      objectTypes(readFileSync(file, "utf8")).flatMap(({ name, fields }) => {
        const twin = twinOf(fields, schemas);
        return twin ? [`${relative(root, file)}: ${name} copies ${twin}; alias components["schemas"]["${twin}"]`] : [];
      }),
    );
    expect(twins).toEqual([]);
  });
});
