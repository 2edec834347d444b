/**
 * A small contract checker over the canonical OpenAPI 3.1 document (generated/openapi/openapi.3.1.json):
 * given an answer (method, path template, status, content type, body), it says whether the document
 * allows it. Any test layer can use it: the Prism mock test, the e2e suite through the client, …
 *
 * Schemas are checked with Ajv's JSON Schema 2020-12 validator, the dialect of OpenAPI 3.1
 * (the document declares `jsonSchemaDialect`). The whole document is registered under one id, so a
 * response schema's `#/components/...` references resolve inside it.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;
type Method = (typeof METHODS)[number];

/** The file of the canonical document, as the `@payments/contract` package exports it. */
export const OPENAPI_31_PATH = createRequire(import.meta.url).resolve("@payments/contract/openapi.3.1.json");

/** The id the document is registered under; refs become `<id>#/…`. */
const DOCUMENT_ID = "urn:payments:openapi.3.1.json";

interface MediaTypeObject {
  schema?: unknown;
}
interface HeaderObject {
  required?: boolean;
}
interface ResponseObject {
  content?: Record<string, MediaTypeObject>;
  headers?: Record<string, HeaderObject>;
}
interface OperationObject {
  operationId?: string;
  requestBody?: { content?: Record<string, MediaTypeObject> };
  responses?: Record<string, ResponseObject>;
}
export interface OpenApiDocument {
  openapi: string;
  servers?: { url: string; variables?: Record<string, { default: string }> }[];
  paths: Record<string, Partial<Record<Method, OperationObject>>>;
}

export interface Operation {
  operationId: string;
  method: Method;
  /** The path template as in the document, e.g. `/v1/merchants/{id}`. */
  path: string;
}

export interface ResponseToCheck {
  /** Any case: `GET`, `get`. */
  method: string;
  /** The path template as in the document (openapi-fetch calls it `schemaPath`). */
  path: string;
  status: number;
  /** The `Content-Type` header; parameters such as `charset` are ignored. */
  contentType: string | null | undefined;
  /** The parsed JSON body; `undefined` when the answer had none. */
  body: unknown;
  /** When given, the headers the document marks required must be present. */
  headers?: Headers;
}

export interface ResponseCheck {
  /** The operation the answer belongs to, or `undefined` when the document has none for method + path. */
  operationId: string | undefined;
  /** Every way the answer departs from the document; empty when it conforms. */
  errors: string[];
}

export interface Contract {
  readonly document: OpenApiDocument;
  /** Every operation under `paths` (webhooks are not answered by the API, so they are not included). */
  readonly operations: readonly Operation[];
  checkResponse(response: ResponseToCheck): ResponseCheck;
  /** Every way a JSON request body departs from the operation's request body schema; empty when it conforms. */
  checkRequestBody(method: string, path: string, body: unknown): string[];
  /** `checkResponse` for a fetch `Response`, reading its body from a clone so the caller can still read it. */
  checkFetchResponse(method: string, path: string, response: Response): Promise<ResponseCheck>;
}

/** The checker for the canonical document, or for a file or document given (a test's altered copy). */
export function loadContract(source: string | OpenApiDocument = OPENAPI_31_PATH): Contract {
  const document = typeof source === "string" ? (JSON.parse(readFileSync(source, "utf8")) as OpenApiDocument) : source;
  const ajv = createAjv(document);
  const validators = new Map<string, ValidateFunction>();

  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      if (!op.operationId) throw new Error(`${method.toUpperCase()} ${path} has no operationId`);
      operations.push({ operationId: op.operationId, method, path });
    }
  }

  function validatorFor(pointer: string[]): ValidateFunction {
    const ref = `${DOCUMENT_ID}#/${pointer.map((p) => encodeURIComponent(p.replaceAll("~", "~0").replaceAll("/", "~1"))).join("/")}`;
    let validate = validators.get(ref);
    if (!validate) {
      validate = ajv.compile({ $ref: ref });
      validators.set(ref, validate);
    }
    return validate;
  }

  function checkResponse(r: ResponseToCheck): ResponseCheck {
    const method = r.method.toLowerCase() as Method;
    const what = `${method.toUpperCase()} ${r.path} → ${r.status}`;
    const op = document.paths[r.path]?.[method];
    if (!op) return { operationId: undefined, errors: [`${what}: no such operation in the document`] };

    const statusKey = documentedStatus(op, r.status);
    if (statusKey === undefined) {
      const documented = Object.keys(op.responses ?? {}).join(", ");
      return { operationId: op.operationId, errors: [`${what}: status not documented (documented: ${documented})`] };
    }
    const response = op.responses?.[statusKey] ?? {};
    const errors: string[] = [];

    for (const [name, header] of Object.entries(response.headers ?? {})) {
      if (header.required && r.headers && !r.headers.has(name)) errors.push(`${what}: required header ${name} missing`);
    }

    const mediaType = r.contentType?.split(";")[0]?.trim().toLowerCase() || undefined;
    const content = response.content ?? {};
    if (Object.keys(content).length === 0) {
      if (r.body !== undefined) errors.push(`${what}: the document allows no body, got one (${mediaType})`);
      return { operationId: op.operationId, errors };
    }
    const documentedType = Object.keys(content).find((type) => type.toLowerCase() === mediaType);
    if (documentedType === undefined) {
      errors.push(`${what}: content type ${mediaType} not documented (documented: ${Object.keys(content).join(", ")})`);
      return { operationId: op.operationId, errors };
    }
    if (content[documentedType]?.schema === undefined) return { operationId: op.operationId, errors };

    const validate = validatorFor([
      "paths",
      r.path,
      method,
      "responses",
      statusKey,
      "content",
      documentedType,
      "schema",
    ]);
    if (!validate(r.body)) {
      for (const e of validate.errors ?? []) {
        errors.push(`${what} ${documentedType}: body${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
      }
    }
    return { operationId: op.operationId, errors };
  }

  function checkRequestBody(method: string, path: string, body: unknown): string[] {
    const m = method.toLowerCase() as Method;
    const what = `${m.toUpperCase()} ${path} request body`;
    const op = document.paths[path]?.[m];
    if (!op) return [`${what}: no such operation in the document`];
    if (op.requestBody?.content?.["application/json"]?.schema === undefined) {
      return [`${what}: the operation takes no JSON body`];
    }
    const validate = validatorFor(["paths", path, m, "requestBody", "content", "application/json", "schema"]);
    if (validate(body)) return [];
    return (validate.errors ?? []).map((e) => `${what}${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
  }

  async function checkFetchResponse(method: string, path: string, response: Response): Promise<ResponseCheck> {
    const text = await response.clone().text();
    const contentType = response.headers.get("Content-Type");
    let body: unknown;
    if (text !== "") {
      try {
        body = JSON.parse(text);
      } catch {
        return {
          operationId: document.paths[path]?.[method.toLowerCase() as Method]?.operationId,
          errors: [`${method.toUpperCase()} ${path} → ${response.status}: body is not JSON (${contentType})`],
        };
      }
    }
    return checkResponse({ method, path, status: response.status, contentType, body, headers: response.headers });
  }

  return { document, operations, checkResponse, checkRequestBody, checkFetchResponse };
}

/** The response key that covers a status: the exact code, then its range (`4XX`), then `default` (OpenAPI 3.1 §4.8.16). */
function documentedStatus(op: OperationObject, status: number): string | undefined {
  const responses = op.responses ?? {};
  return [String(status), `${String(status)[0]}XX`, "default"].find((key) => key in responses);
}

/** Every `x-` keyword used anywhere in the document. */
function extensionKeywords(document: OpenApiDocument): string[] {
  const found = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === "object") {
      for (const [key, value] of Object.entries(node)) {
        if (key.startsWith("x-")) found.add(key);
        visit(value);
      }
    }
  };
  visit(document);
  return [...found];
}

function createAjv(document: OpenApiDocument): Ajv2020 {
  // Strict mode stays on, so a typo in a schema keyword fails loudly. The keywords OpenAPI 3.1 adds
  // to JSON Schema (its base dialect vocabulary), the project's own extension keywords and the
  // document's top-level fields are declared as annotations; `discriminator` only speeds up `oneOf` choice, which Ajv does without it.
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats(ajv);
  // The project's own `x-` extensions (x-sensitive, x-extensible-enum, ...) are annotations too.
  ajv.addVocabulary(["discriminator", "xml", "externalDocs", "example", ...extensionKeywords(document)]);
  ajv.addVocabulary(Object.keys(document).filter((key) => !ajv.getKeyword(key)));
  ajv.addFormat("int32", {
    type: "number",
    validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31,
  });
  ajv.addFormat("int64", { type: "number", validate: (n: number) => Number.isInteger(n) });
  ajv.addSchema(document as object, DOCUMENT_ID);
  return ajv;
}
