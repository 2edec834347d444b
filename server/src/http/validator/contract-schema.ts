import type { OpenApiDocument } from "../contract.ts";
import { isObject } from "./words.ts";

// The contract's schemas as the validator's messages read them (http/validator-errors.ts): a finding
// names a path in the request; this finds the schema that applies there, through `$ref`s, `allOf`
// members and the branch of a union the value selects. Read from the contract as loaded
// (loadContract), not from the copy express-openapi-validator was given, which it rewrites.

/** One JSON Schema object of the contract; its keywords are read through the checks below, not cast. */
export type Schema = Record<string, unknown>;

/** A field's schema as the request met it: the schemas that apply to it (allOf and a union's chosen branch). */
export interface Located {
  nodes: Schema[];
  value: unknown;
  /** A union with a `type` that the value does not select a branch of (no object, no or an unknown `type`). */
  union?: { types: string[]; tokenBranch: boolean };
}

/** A keyword holding a list (`allOf`, `anyOf`, `required`), or none. */
export const listOf = (node: Schema, name: string): unknown[] => {
  const v = node[name];
  return Array.isArray(v) ? v : [];
};

/** A keyword holding an object (`properties`), or an empty one. */
export const recordOf = (node: Schema, name: string): Record<string, unknown> => {
  const v = node[name];
  return isObject(v) ? v : {};
};

/** The first value a keyword has among the schemas that apply, outermost first. */
export const keyword = (nodes: Schema[], name: string): unknown => nodes.find((n) => n[name] !== undefined)?.[name];

/** Whether the schemas describe a token's id (its pattern starts `^tok_`). */
export const isTokenId = (nodes: Schema[]) => String(keyword(nodes, "pattern") ?? "").startsWith("^tok_");

/** The property names an object takes. */
export const propertyNames = (located: Located): string[] => [
  ...new Set(located.nodes.flatMap((n) => Object.keys(recordOf(n, "properties")))),
];

/** The words a schema gives for its form (`x-pattern-message`), with its example when it has one. */
export function expected(nodes: Schema[]): string | undefined {
  const words = keyword(nodes, "x-pattern-message");
  if (typeof words !== "string") return undefined;
  const examples = keyword(nodes, "examples");
  const example = Array.isArray(examples) && typeof examples[0] === "string" ? examples[0] : undefined;
  return example && !words.includes("such as") ? `${words}, such as \`${example}\`` : words;
}

/** Whether a key passes a `propertyNames` schema (the Metadata key rule: length and pattern). */
export function nameAllowed(rule: Schema[], key: string): boolean {
  for (const n of rule) {
    if (typeof n.minLength === "number" && [...key].length < n.minLength) return false;
    if (typeof n.maxLength === "number" && [...key].length > n.maxLength) return false;
    if (typeof n.pattern === "string" && !new RegExp(n.pattern, "u").test(key)) return false;
  }
  return true;
}

/** The last segment of a `$ref` (`#/components/schemas/ChargeCreate` → `ChargeCreate`). */
const refName = (ref: string) => ref.split("/").pop() ?? "";

/** The contract's component schemas, walked as a finding's path needs. */
export class ContractSchemas {
  readonly #schemas: Record<string, unknown>;

  constructor(doc: OpenApiDocument) {
    this.#schemas = isObject(doc.components.schemas) ? doc.components.schemas : {};
  }

  /** A schema with its `$ref`s followed (at most 20 deep). */
  deref(node: unknown): Schema | undefined {
    let n = node;
    for (let i = 0; isObject(n) && typeof n.$ref === "string" && i < 20; i++) n = this.#schemas[refName(n.$ref)];
    return isObject(n) ? n : undefined;
  }

  /** A schema with its allOf members (each resolved), outermost first. */
  expand(node: unknown, out: Schema[] = []): Schema[] {
    const n = this.deref(node);
    if (!n) return out;
    out.push(n);
    for (const member of listOf(n, "allOf")) this.expand(member, out);
    return out;
  }

  /** The values of a union branch's `type` property, when it has one. */
  typeValues(nodes: Schema[]): string[] | undefined {
    for (const n of nodes) {
      const property = this.expand(recordOf(n, "properties").type);
      const values = keyword(property, "enum") ?? keyword(property, "const");
      if (Array.isArray(values)) return values.map(String);
      if (typeof values === "string") return [values];
    }
    return undefined;
  }

  /** Where a token goes in a schema (`payment_method.token`), if it takes one. */
  tokenPath(node: unknown, prefix: string, depth = 0): string | undefined {
    if (depth > 6) return undefined;
    for (const n of this.expand(node)) {
      for (const [name, property] of Object.entries(recordOf(n, "properties"))) {
        const path = prefix ? `${prefix}.${name}` : name;
        if (isTokenId(this.expand(property))) return path;
        const inner = this.tokenPath(property, path, depth + 1);
        if (inner) return inner;
      }
      for (const branch of listOf(n, "anyOf")) {
        const inner = this.tokenPath(branch, prefix, depth + 1);
        if (inner) return inner;
      }
    }
    return undefined;
  }

  /** The schemas that apply to a value: allOf members, and the branch of a union that the value selects. */
  resolve(node: unknown, value: unknown): Located {
    const nodes = this.expand(node);
    const located: Located = { nodes, value };
    for (const n of [...nodes]) {
      if (!Array.isArray(n.anyOf)) continue;
      const alternatives = n.anyOf.map((a) => this.expand(a));
      const nonNull = alternatives.filter((a) => keyword(a, "type") !== "null");
      const tagged = nonNull.map((a) => this.typeValues(a));
      if (nonNull.length > 1 && tagged.every((t) => t !== undefined)) {
        const chosen = isObject(value) ? nonNull.find((_, i) => tagged[i]?.includes(String(value.type))) : undefined;
        if (chosen) nodes.push(...chosen);
        else {
          const tokenBranch = nonNull.some((branch) => branch.some((b) => this.tokenPath(b, "") !== undefined));
          located.union = { types: tagged.flat(), tokenBranch };
        }
      } else {
        // Nullable (`X | null`) or an open enum (known values, or any string): every alternative applies.
        for (const a of nonNull) nodes.push(...a);
      }
    }
    return located;
  }

  /** The schema of one field of an object (a property, or the object's additionalProperties). */
  child(parent: Located, key: string): Located | undefined {
    const container = parent.value;
    const value = isObject(container) || Array.isArray(container) ? Reflect.get(container, key) : undefined;
    for (const n of parent.nodes) {
      const property = recordOf(n, "properties")[key];
      if (property !== undefined) return this.resolve(property, value);
    }
    for (const n of parent.nodes) {
      if (isObject(n.additionalProperties)) return this.resolve(n.additionalProperties, value);
      if (Array.isArray(container) && n.items !== undefined) return this.resolve(n.items, value);
    }
    return undefined;
  }

  /** Whether a field's schemas allow `null` beside their type (`X | null`). */
  nullable(nodes: Schema[]): boolean {
    return nodes.some((n) => listOf(n, "anyOf").some((a) => this.deref(a)?.type === "null"));
  }
}

/** One operation's parameters (their `$ref`s followed) and its JSON body's schema. */
export function operationSchemas(
  doc: OpenApiDocument,
  method: string,
  route: string,
): { parameters: Schema[]; body: unknown } {
  const operation = doc.paths[route]?.[method];
  const shared = isObject(doc.components.parameters) ? doc.components.parameters : {};
  const parameters = (Array.isArray(operation?.parameters) ? operation.parameters : []).map((p: unknown) => {
    const param = isObject(p) && typeof p.$ref === "string" ? shared[refName(p.$ref)] : p;
    return isObject(param) ? param : {};
  });
  const requestBody = isObject(operation?.requestBody) ? operation.requestBody : {};
  const json = recordOf(recordOf(requestBody, "content"), "application/json");
  return { parameters, body: json.schema };
}
