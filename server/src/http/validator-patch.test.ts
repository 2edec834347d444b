import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import express from "express";
import * as OpenApiValidator from "express-openapi-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The validator is patched at install (patches/express-openapi-validator+5.6.2.patch, applied by the
// root postinstall through patch-package): it compiles each route's matcher once instead of on every
// request (cdimascio/express-openapi-validator#1217). These tests fail when the patch stops applying,
// say after an upgrade that neither includes the fix nor matches the patch.

const fromValidator = createRequire(createRequire(import.meta.url).resolve("express-openapi-validator"));
const pathToRegexpModule = fromValidator("path-to-regexp") as { pathToRegexp: (...args: unknown[]) => unknown };

const DOC = {
  openapi: "3.1.0",
  info: { title: "patch check", version: "1" },
  paths: Object.fromEntries(
    ["/v1/a/{id}", "/v1/b/{id}", "/v1/c/{id}", "/v1/d/{id}"].map((path) => [
      path,
      {
        get: {
          parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
          responses: { "200": { description: "ok" } },
        },
      },
    ]),
  ),
};

describe("express-openapi-validator, as installed", () => {
  let url: string;
  let server: ReturnType<express.Express["listen"]>;
  const original = pathToRegexpModule.pathToRegexp;
  let compiled = 0;

  beforeAll(async () => {
    const app = express();
    app.use(
      // biome-ignore lint/suspicious/noExplicitAny: a minimal document for this check
      OpenApiValidator.middleware({ apiSpec: DOC as any, validateRequests: true, validateResponses: false }),
    );
    app.get("/v1/:kind/:id", (req, res) => {
      res.json({ id: req.params.id });
    });
    await new Promise<void>((resolve) => {
      server = app.listen(0, "127.0.0.1", () => resolve());
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // Counts the compilations the validator asks for; it reads the function off the module per call.
    pathToRegexpModule.pathToRegexp = (...args: unknown[]) => {
      compiled++;
      return original(...args);
    };
  });

  afterAll(() => {
    pathToRegexpModule.pathToRegexp = original;
    server?.close();
  });

  it("carries the route-matcher cache of upstream pull request #1217", () => {
    const file = fromValidator.resolve("express-openapi-validator/dist/middlewares/openapi.metadata.js");
    const text = readFileSync(file, "utf8");
    expect(text).toContain("express-openapi-validator/pull/1217");
    expect(text).toContain("routeMatcher(expressRoute, strict, sensitive)");
  });

  it("compiles each route's matcher once, not on every request", async () => {
    // The last route in the document: every route is scanned (and, unpatched, compiled) before it matches.
    const first = await fetch(`${url}/v1/d/x1`);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ id: "x1" });
    const afterFirst = compiled;
    expect(afterFirst).toBeLessThanOrEqual(Object.keys(DOC.paths).length);

    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${url}/v1/${i % 2 ? "d" : "a"}/y${i}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ id: `y${i}` });
    }
    // Unpatched, these ten requests compile 25 matchers (4 for each `d`, 1 for each `a`).
    expect(compiled).toBe(afterFirst);
  });

  it("still refuses a path that matches no route of the document", async () => {
    const res = await fetch(`${url}/v1/e/x`);
    expect(res.status).toBe(404);
  });
});

// The same patch spares start-up two compilations the server never uses (docs/operating.md "Start-up and
// memory": 1.18 s to 0.94 s from spawn to first answer): the OpenAPI schema's own validator when the
// document is not to be validated (validateApiSpec: false), and an ajv compilation of every component
// schema a $ref names, which the schema preprocessor made only to look the schema's object up.
describe("express-openapi-validator's start-up, as installed", () => {
  const AjvCore = fromValidator("ajv/dist/core").default as {
    prototype: { getSchema: (...args: unknown[]) => unknown; compile: (...args: unknown[]) => unknown };
  };
  const COMPONENTS_DOC = {
    openapi: "3.1.0",
    info: { title: "patch check", version: "1" },
    paths: {
      "/things": {
        post: {
          requestBody: {
            required: true,
            content: { "application/json": { schema: { $ref: "#/components/schemas/Thing" } } },
          },
          responses: {
            "201": {
              description: "made",
              content: { "application/json": { schema: { $ref: "#/components/schemas/Thing" } } },
            },
            "400": {
              description: "refused",
              content: { "application/json": { schema: { $ref: "#/components/schemas/Problem" } } },
            },
          },
        },
      },
    },
    components: {
      schemas: {
        Thing: {
          type: "object",
          required: ["name"],
          additionalProperties: false,
          properties: { name: { type: "string", minLength: 1 } },
        },
        Problem: { type: "object", properties: { title: { type: "string" } } },
      },
    },
  };

  it("looks component schemas up without compiling them, and skips the OpenAPI schema's validator", async () => {
    const looked: unknown[] = [];
    let compiledSchemas = 0;
    const { getSchema, compile } = AjvCore.prototype;
    AjvCore.prototype.getSchema = function (this: unknown, ...args: unknown[]) {
      looked.push(args[0]);
      return getSchema.apply(this, args);
    };
    AjvCore.prototype.compile = function (this: unknown, ...args: unknown[]) {
      compiledSchemas++;
      return compile.apply(this, args);
    };
    const app = express();
    app.use(express.json());
    app.use(
      OpenApiValidator.middleware({
        // biome-ignore lint/suspicious/noExplicitAny: a minimal document for this check
        apiSpec: COMPONENTS_DOC as any,
        validateApiSpec: false,
        validateRequests: true,
        validateResponses: false,
      }),
    );
    app.post("/things", (req, res) => {
      res.status(201).json(req.body);
    });
    app.use(((err, _req, res, _next) => {
      res.status(err.status ?? 500).json({ title: err.message });
    }) as express.ErrorRequestHandler);
    const server = await new Promise<ReturnType<express.Express["listen"]>>((resolve) => {
      const s = app.listen(0, "127.0.0.1", () => resolve(s));
    });
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/things`;
      const post = (body: unknown) =>
        fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      // The component the request body names still validates it, both ways.
      const made = await post({ name: "x" });
      expect(made.status).toBe(201);
      expect(await made.json()).toEqual({ name: "x" });
      const refused = await post({ name: "" });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { title: string }).title).toContain("name");
      expect(looked.filter((ref) => String(ref).startsWith("#/components/schemas/"))).toEqual([]);
      // Unpatched, the OpenAPI 3.1 schema's validator is compiled at start-up (the request's validator is
      // built by another path, which this count does not see).
      expect(compiledSchemas).toBe(0);
    } finally {
      AjvCore.prototype.getSchema = getSchema;
      AjvCore.prototype.compile = compile;
      server.close();
    }
  });
});
