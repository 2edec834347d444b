import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import express, { type Express, type Request, type Response } from "express";
import type { ErrorCode } from "../domain/kernel/errors.ts";
import { isRecord } from "../guards.ts";
import { contractDocument, type OpenApiDocument } from "./contract.ts";
import { CSP_BASE, escapeHtml, pageHeaders } from "./page-security.ts";
import { ERROR_CODES, ERROR_REFERENCE_PATH, isErrorCode, PROBLEM_TYPES, problemTypeUri } from "./problems.ts";
import { rebaseExamples } from "./served-document.mjs";

// The pages people open (docs/console.md "Console and API reference"): the developer console at /console,
// the API reference at /docs (Redoc, bundled locally, rendering the very document this server
// validates against, served at /docs/openapi.json) and the error reference at /docs/errors, which
// every problem's `type` points into. They are not API operations, so they sit outside the contract
// and before authentication. Their HTML, scripts and styles are built by the clients/console workspace;
// nothing is loaded from another host, and each page gets a Content-Security-Policy that allows its
// own scripts and nothing inline.

const here = dirname(fileURLToPath(import.meta.url));

/**
 * Where the built pages are: `server/dist/public` in the production build (server/build.mjs copies
 * them there), `clients/console/dist` when the server runs from its sources.
 */
export function findPagesDir(): string | null {
  const candidates = [join(here, "public"), join(here, "../../../clients/console/dist")];
  return candidates.find((dir) => existsSync(join(dir, "console", "index.html"))) ?? null;
}

/** Content-Security-Policy of each page. */
export const CSP = {
  /** The console: its own script and stylesheet, calls to its own origin, no inline code or style. */
  console: [
    ...CSP_BASE,
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "form-action 'self'",
  ].join("; "),
  /**
   * The reference: Redoc's bundle is its own script, but it styles itself with styled-components,
   * which writes `<style>` elements at run time, so styles (not scripts) may be inline here; its
   * search index runs in a worker it starts from a blob.
   */
  docs: [
    ...CSP_BASE,
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "form-action 'none'",
  ].join("; "),
  /** The error reference: static HTML and one stylesheet. */
  errors: [...CSP_BASE, "style-src 'self'", "img-src 'self'", "form-action 'none'"].join("; "),
};

/** `code` spans in the table's prose become <code>. */
const prose = (s: string) => escapeHtml(s).replace(/`([^`]+)`/g, "<code>$1</code>");

/** A member of a document's object that is itself an object (`responses`, `content`, `examples`), or an empty one. */
const recordAt = (node: unknown, name: string): Record<string, unknown> => {
  const value = isRecord(node) ? node[name] : undefined;
  return isRecord(value) ? value : {};
};

/**
 * The HTTP statuses the contract answers each error code with, for the error reference: every status
 * of an operation's responses whose problem example carries the code, or whose description names it
 * (`code`). A code the contract ties to no response of its own (a concurrent change's `conflict`) gets
 * the server's status for it (problems.ts) when some operation declares that status; a code with
 * neither is answered by no operation (an empty list), and the page says so rather than show a status
 * no operation gives (card_declined was listed as 402: a declined card is a charge's `failure_code`).
 */
export function contractStatuses(document: OpenApiDocument): Map<ErrorCode, number[]> {
  const codes = ERROR_CODES;
  const named = new Map<ErrorCode, Set<number>>(codes.map((code) => [code, new Set()]));
  const declared = new Set<number>();
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations)) {
      for (const [key, response] of Object.entries(recordAt(operation, "responses"))) {
        const status = Number(key);
        if (!Number.isInteger(status) || status < 400) continue;
        declared.add(status);
        for (const media of Object.values(recordAt(response, "content"))) {
          for (const example of Object.values(recordAt(media, "examples"))) {
            const code = recordAt(example, "value").code;
            if (isErrorCode(code)) named.get(code)?.add(status);
          }
        }
        const description = isRecord(response) && typeof response.description === "string" ? response.description : "";
        for (const code of codes) if (description.includes(`\`${code}\``)) named.get(code)?.add(status);
      }
    }
  }
  return new Map(
    codes.map((code) => {
      const statuses = [...(named.get(code) ?? [])].sort((a, b) => a - b);
      if (statuses.length > 0) return [code, statuses];
      const own = PROBLEM_TYPES[code].status;
      return [code, declared.has(own) ? [own] : []];
    }),
  );
}

/**
 * The error reference: every error code with the statuses the contract answers it with (contractStatuses),
 * title and meaning, each under its own anchor, with the `type` a problem of that code has on the
 * server whose public address is `publicUrl`.
 */
export function errorReferenceHtml(publicUrl: string, document: OpenApiDocument = contractDocument()): string {
  const statuses = contractStatuses(document);
  const entry = (code: ErrorCode) => {
    const t = PROBLEM_TYPES[code];
    const badges = (statuses.get(code) ?? []).map((status) => ` <span class="status">${status}</span>`).join("");
    return `      <section class="error" id="${code}" aria-labelledby="${code}-title">
        <h2 id="${code}-title"><a href="#${code}"><code>${code}</code></a>${badges} ${escapeHtml(t.title)}</h2>
        <p>${prose(t.meaning)}</p>
        <p class="type">type: <code>${escapeHtml(problemTypeUri(publicUrl, code))}</code></p>
      </section>`;
  };
  const first = (code: ErrorCode) => statuses.get(code)?.[0] ?? 0;
  const byStatus = [...ERROR_CODES].sort((a, b) => first(a) - first(b) || a.localeCompare(b));
  const answered = byStatus.filter((code) => first(code) > 0).map(entry);
  const unanswered = byStatus.filter((code) => first(code) === 0).map(entry);
  const outside =
    unanswered.length === 0
      ? ""
      : `
      <h2 class="group" id="no-operation">Codes no operation answers with</h2>
      <p>The contract declares no operation that answers with these: they answer requests that are no operation
      (a method a path does not have), or stay in the list of codes of <code>/v1</code> (codes are never removed
      within a version) without any operation answering with them today.</p>
${unanswered.join("\n")}`;
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Error reference · Payments API</title>
    <link rel="icon" href="/docs/assets/favicon.svg" type="image/svg+xml">
    <link rel="stylesheet" href="/docs/assets/errors.css">
  </head>
  <body>
    <header>
      <p><a href="/docs">API reference</a> · <a href="/console">Console</a></p>
      <h1>Error reference</h1>
      <p>Every error is an RFC 9457 problem (<code>application/problem+json</code>) whose <code>type</code> is this page
      with the error's <code>code</code> as the anchor. Handle errors by <code>code</code>, and an unknown code by its HTTP status:
      new codes may be added within <code>/v1</code>. Each code's status is the one the API document
      (<a href="/docs/openapi.json">openapi.json</a>) answers it with.</p>
    </header>
    <main>
${answered.join("\n")}${outside}
    </main>
  </body>
</html>
`;
}

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Not built</title></head>
<body><h1>These pages are not built</h1>
<p>Run <code>npm run build -w @payments/console</code> (or <code>npm start</code>, which builds them) and reload.</p>
</body></html>
`;

/**
 * Mounts /docs (always) and /console (when `console` is true) on the app. `publicUrl` is read at
 * request time: it is the address the served document names as its server.
 */
export function mountPages(app: Express, options: { console: boolean; dir?: string | null }): void {
  const dir = options.dir === undefined ? findPagesDir() : options.dir;
  // Both name the server's public address, which startServer may learn only once it listens (PORT=0):
  // made at the first request, again if the address changes.
  const perAddress = <T>(make: (publicUrl: string) => T) => {
    let made: { publicUrl: string; value: T } | undefined;
    return (publicUrl: string): T => {
      if (made?.publicUrl !== publicUrl) made = { publicUrl, value: make(publicUrl) };
      return made.value;
    };
  };
  const errorsPage = perAddress(errorReferenceHtml);
  // The document the server runs on, with its `servers` entry and its examples' links (problem types,
  // payment link pages) on this server's public address.
  const servedDocument = perAddress((publicUrl) => {
    // rebaseExamples copies the document: the contract itself is left as it is.
    const doc = rebaseExamples(contractDocument(), publicUrl);
    return JSON.stringify({ ...doc, servers: [{ url: publicUrl, description: "This server" }] });
  });

  const sendPage = (csp: string, file: string) => (_req: Request, res: Response) => {
    pageHeaders(res, csp);
    if (dir === null) {
      res.status(503).type("html").send(NOT_BUILT);
      return;
    }
    res.sendFile(join(dir, file), { headers: { "Content-Type": "text/html; charset=utf-8" } });
  };
  // Assets are revalidated (ETag) rather than never stored: the answers carry no secret.
  const assets = (sub: string, csp: string) =>
    dir === null
      ? (_req: Request, res: Response) => {
          res.status(404).end();
        }
      : express.static(join(dir, sub, "assets"), {
          fallthrough: false,
          index: false,
          redirect: false,
          setHeaders: (res) => {
            res.setHeader("Cache-Control", "no-cache");
            res.setHeader("Content-Security-Policy", csp);
            res.setHeader("Cross-Origin-Resource-Policy", "same-origin");
          },
        });

  app.get(["/docs", "/docs/"], sendPage(CSP.docs, "docs/index.html"));
  app.get(ERROR_REFERENCE_PATH, (_req, res) => {
    pageHeaders(res, CSP.errors);
    res
      .status(200)
      .type("html")
      .send(errorsPage(String(res.app.locals.publicUrl)));
  });
  app.get("/docs/openapi.json", (_req, res) => {
    res.setHeader("Cache-Control", "no-cache");
    res
      .status(200)
      .type("application/json")
      .send(servedDocument(String(res.app.locals.publicUrl)));
  });
  app.use("/docs/assets", assets("docs", CSP.docs));

  if (options.console) {
    app.get(["/console", "/console/"], sendPage(CSP.console, "console/index.html"));
    app.use("/console/assets", assets("console", CSP.console));
  }
}
