// What the server's validator messages need to know of the contract (server/src/http/validator/), read
// once here at `npm run generate` rather than by walking the schemas at run time (issue 29). For every
// place a request can reach (an operation's body and parameters, and from there each property, map
// value and list item), one "hint": the keywords of every schema that applies there ($refs followed,
// `allOf` members, the alternatives of a nullable field or an open enum), each the first found, outermost
// first, as the messages read them. A union with a `type` (a charge's `payment_method`) has one hint per
// `type` value, for the branch the value selects. Written to generated/types/validation-hints.ts.
//
// The walk is the one the server did at run time (its `ContractSchemas`, before this file); the messages
// read the result through server/src/http/validator/hints.ts.

/** JSON Schema keywords with a number the messages quote ("must be at most 31622400"). */
const LIMITS = [
  "minimum",
  "exclusiveMinimum",
  "maximum",
  "exclusiveMaximum",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
];

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
const listOf = (node, name) => (Array.isArray(node[name]) ? node[name] : []);
const recordOf = (node, name) => (isObject(node[name]) ? node[name] : {});
const keyword = (nodes, name) => nodes.find((n) => n[name] !== undefined)?.[name];
const refName = (ref) => ref.split("/").pop() ?? "";
const isTokenId = (nodes) => String(keyword(nodes, "pattern") ?? "").startsWith("^tok_");

/** The words a schema gives for its form (`x-pattern-message`), with its example when it has one. */
function expected(nodes) {
  const words = keyword(nodes, "x-pattern-message");
  if (typeof words !== "string") return undefined;
  const examples = keyword(nodes, "examples");
  const example = Array.isArray(examples) && typeof examples[0] === "string" ? examples[0] : undefined;
  return example && !words.includes("such as") ? `${words}, such as \`${example}\`` : words;
}

/**
 * The hints of a whole document: `hints` (indexed; a hint names its fields' hints by index) and, per
 * operation (`post /v1/charges`), its parameters, its JSON body's hint and where a token goes in it.
 */
export function validationHints(doc) {
  const schemas = isObject(doc.components?.schemas) ? doc.components.schemas : {};
  const sharedParameters = isObject(doc.components?.parameters) ? doc.components.parameters : {};

  const deref = (node) => {
    let n = node;
    for (let i = 0; isObject(n) && typeof n.$ref === "string" && i < 20; i++) n = schemas[refName(n.$ref)];
    return isObject(n) ? n : undefined;
  };
  const expand = (node, out = []) => {
    const n = deref(node);
    if (!n) return out;
    out.push(n);
    for (const member of listOf(n, "allOf")) expand(member, out);
    return out;
  };
  const typeValues = (nodes) => {
    for (const n of nodes) {
      const property = expand(recordOf(n, "properties").type);
      const values = keyword(property, "enum") ?? keyword(property, "const");
      if (Array.isArray(values)) return values.map(String);
      if (typeof values === "string") return [values];
    }
    return undefined;
  };
  const tokenPath = (node, prefix, depth = 0) => {
    if (depth > 6) return undefined;
    for (const n of expand(node)) {
      for (const [name, property] of Object.entries(recordOf(n, "properties"))) {
        const path = prefix ? `${prefix}.${name}` : name;
        if (isTokenId(expand(property))) return path;
        const inner = tokenPath(property, path, depth + 1);
        if (inner) return inner;
      }
      for (const branch of listOf(n, "anyOf")) {
        const inner = tokenPath(branch, prefix, depth + 1);
        if (inner) return inner;
      }
    }
    return undefined;
  };

  /**
   * The schemas that apply to a value whose `type` is `chosen` (undefined: a value that selects no
   * branch): allOf members, the branch of a tagged union the type selects, and every alternative of a
   * nullable field or an open enum. Also the tagged union met, if any (at most one per place).
   */
  const resolve = (base, chosen, where) => {
    const nodes = [...base];
    let tagged;
    for (const n of base) {
      if (!Array.isArray(n.anyOf)) continue;
      const alternatives = n.anyOf.map((a) => expand(a));
      const nonNull = alternatives.filter((a) => keyword(a, "type") !== "null");
      const types = nonNull.map(typeValues);
      if (nonNull.length > 1 && types.every((t) => t !== undefined)) {
        if (tagged) throw new Error(`validation hints: ${where} has two unions with a \`type\`; the messages read one`);
        tagged = { branches: nonNull, types };
        const branch = chosen === undefined ? undefined : nonNull.find((_, i) => types[i].includes(chosen));
        if (branch) nodes.push(...branch);
      } else {
        for (const a of nonNull) nodes.push(...a);
      }
    }
    return { nodes, tagged };
  };

  const hints = [];
  const indexOf = new Map();
  const pending = [];
  const EMPTY = {};

  /** The index of the hint for a schema (reserved now, filled in when the queue reaches it). */
  const hintOf = (node, where) => {
    const key = deref(node) ?? EMPTY;
    const known = indexOf.get(key);
    if (known !== undefined) return known;
    const index = hints.length;
    hints.push(undefined);
    indexOf.set(key, index);
    pending.push(() => {
      const base = expand(node);
      const { nodes, tagged } = resolve(base, undefined, where);
      const hint = flatten(nodes, where);
      if (tagged) {
        // One hint per branch; a type value listed by two branches selects the first, as find() did at run time.
        const byType = [];
        for (const values of tagged.types) {
          const branchHint = hints.length;
          hints.push(undefined);
          pending.push(() => {
            hints[branchHint] = flatten(resolve(base, values[0], where).nodes, where);
          });
          for (const value of values)
            if (!byType.some((b) => b.type === value)) byType.push({ type: value, hint: branchHint });
        }
        hint.union = {
          types: tagged.types.flat(),
          tokenBranch: tagged.branches.some((branch) => branch.some((b) => tokenPath(b, "") !== undefined)),
          byType,
        };
      }
      hints[index] = hint;
    });
    return index;
  };

  /** One place's hint from the schemas that apply there. */
  const flatten = (nodes, where) => {
    const hint = {};
    const declared = keyword(nodes, "type");
    const types = (Array.isArray(declared) ? declared : [declared]).filter((t) => typeof t === "string");
    if (types.length > 0) hint.types = types;
    if (nodes.some((n) => listOf(n, "anyOf").some((a) => deref(a)?.type === "null"))) hint.nullable = true;
    const listed = keyword(nodes, "enum");
    const constant = keyword(nodes, "const");
    if (Array.isArray(listed)) hint.allowed = listed;
    else if (constant !== undefined) hint.allowed = [constant];
    const pattern = keyword(nodes, "pattern");
    if (typeof pattern === "string") hint.pattern = pattern;
    if (isTokenId(nodes)) hint.tokenId = true;
    const words = expected(nodes);
    if (words !== undefined) hint.expected = words;
    const format = keyword(nodes, "format");
    if (format !== undefined) hint.format = String(format);
    const limits = {};
    for (const name of LIMITS) {
      const value = keyword(nodes, name);
      if (value === undefined) continue;
      if (typeof value !== "number") throw new Error(`validation hints: ${where}: ${name} must be a number`);
      limits[name] = value;
    }
    if (Object.keys(limits).length > 0) hint.limits = limits;
    const required = nodes.flatMap((n) => listOf(n, "required"));
    if (required.length > 0) hint.required = required;
    // Every property any of the schemas names, in order; a property's schema is the first one's.
    const properties = [];
    for (const n of nodes) {
      for (const [name, property] of Object.entries(recordOf(n, "properties"))) {
        if (!properties.some(([known]) => known === name))
          properties.push([name, hintOf(property, `${where}.${name}`)]);
      }
    }
    if (properties.length > 0) hint.properties = properties;
    // An object that takes exactly one of its fields (minProperties = maxProperties = 1, the fields of
    // its first `properties`): SandboxClockAdvanceRequest's `seconds` or `to`.
    const first = keyword(nodes, "properties");
    const own = Object.keys(isObject(first) ? first : {});
    if (limits.minProperties === 1 && limits.maxProperties === 1 && own.length >= 2) hint.exactlyOneOf = own;
    // A map's values (additionalProperties) and a list's items: for a list, whichever a schema gives first.
    const map = nodes.find((n) => isObject(n.additionalProperties));
    if (map) hint.additional = hintOf(map.additionalProperties, `${where}.*`);
    const element = nodes.find((n) => isObject(n.additionalProperties) || n.items !== undefined);
    if (element)
      hint.elements = isObject(element.additionalProperties)
        ? hintOf(element.additionalProperties, `${where}.*`)
        : hintOf(element.items, `${where}[]`);
    // A map's keys (propertyNames): each schema's own checks, and the words for the form they take.
    const keyRule = expand(keyword(nodes, "propertyNames"));
    if (keyRule.length > 0) {
      const checks = keyRule
        .map((n) => ({
          ...(typeof n.minLength === "number" ? { minLength: n.minLength } : {}),
          ...(typeof n.maxLength === "number" ? { maxLength: n.maxLength } : {}),
          ...(typeof n.pattern === "string" ? { pattern: n.pattern } : {}),
        }))
        .filter((c) => Object.keys(c).length > 0);
      const keyWords = expected(keyRule);
      hint.keys = { checks, ...(keyWords !== undefined ? { expected: keyWords } : {}) };
    }
    return hint;
  };

  const operations = {};
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const where = `${method.toUpperCase()} ${path}`;
      const parameters = (Array.isArray(op.parameters) ? op.parameters : []).map((p) => {
        const param = isObject(p) && typeof p.$ref === "string" ? sharedParameters[refName(p.$ref)] : p;
        const spec = isObject(param) ? param : {};
        return {
          in: String(spec.in),
          name: String(spec.name),
          hint: hintOf(spec.schema, `${where} ${spec.in} ${spec.name}`),
        };
      });
      const schema = op.requestBody?.content?.["application/json"]?.schema;
      const entry = { parameters };
      if (schema !== undefined) {
        entry.body = hintOf(schema, `${where} body`);
        const token = tokenPath(schema, "");
        if (token !== undefined) entry.tokenPath = token;
      }
      operations[`${method} ${path}`] = entry;
    }
  }
  while (pending.length > 0) pending.shift()();
  return { hints, operations };
}

/** The hints as TypeScript: their types, then one hint a line (so a spec change shows as the lines it changes). */
export function validationHintsModule(doc, banner) {
  const { hints, operations } = validationHints(doc);
  return [
    `// ${banner}`,
    "",
    "// What the server's validator messages need to know of the contract, read from it at generation",
    "// (spec/scripts/validation-hints.mjs; server/src/http/validator/hints.ts reads it).",
    "",
    "/** Keywords with a number a message quotes. */",
    "export interface HintLimits {",
    ...LIMITS.map((name) => `  ${name}?: number;`),
    "}",
    "",
    "/** The checks a map's keys pass (its `propertyNames` schemas), and the words for their form. */",
    "export interface KeyRule {",
    "  checks: { minLength?: number; maxLength?: number; pattern?: string }[];",
    "  expected?: string;",
    "}",
    "",
    "/**",
    " * One place a request can reach, as the schemas that apply there describe it (each keyword the first",
    " * found, outermost first). Fields name other hints by their index in HINTS.",
    " */",
    "export interface ValidationHint {",
    "  /** The JSON types it takes (`type`). */",
    "  types?: string[];",
    "  /** Whether `null` is allowed beside its type (`X | null`). */",
    "  nullable?: boolean;",
    "  /** The values it takes (`enum`, or `[const]`). */",
    "  allowed?: unknown[];",
    "  pattern?: string;",
    "  /** Whether it is a token's id (its pattern starts `^tok_`). */",
    "  tokenId?: boolean;",
    "  /** Its form in words (`x-pattern-message`, with its example). */",
    "  expected?: string;",
    "  format?: string;",
    "  limits?: HintLimits;",
    "  /** The fields it requires (every schema's `required`). */",
    "  required?: string[];",
    "  /** Its fields, in order, each with its hint. */",
    "  properties?: [string, number][];",
    "  /** The fields of which it takes exactly one (minProperties = maxProperties = 1). */",
    "  exactlyOneOf?: string[];",
    "  /** A map's values (`additionalProperties`). */",
    "  additional?: number;",
    "  /** A list's items (or a map's values, whichever its schemas give first). */",
    "  elements?: number;",
    "  keys?: KeyRule;",
    "  /** A union with a `type`: the types it takes, whether a branch takes a token, each type's branch. */",
    "  union?: { types: string[]; tokenBranch: boolean; byType: { type: string; hint: number }[] };",
    "}",
    "",
    "/** One operation's parameters, its JSON body's hint and where a token goes in that body. */",
    "export interface OperationHints {",
    "  parameters: { in: string; name: string; hint: number }[];",
    "  body?: number;",
    "  tokenPath?: string;",
    "}",
    "",
    "export const HINTS: readonly ValidationHint[] = [",
    ...hints.map((hint, i) => `  /* ${i} */ ${JSON.stringify(hint)},`),
    "];",
    "",
    "/** Per operation, keyed `method path` (`post /v1/charges`). */",
    "export const OPERATION_HINTS: Readonly<Record<string, OperationHints>> = {",
    ...Object.entries(operations).map(([key, entry]) => `  ${JSON.stringify(key)}: ${JSON.stringify(entry)},`),
    "};",
    "",
  ].join("\n");
}
