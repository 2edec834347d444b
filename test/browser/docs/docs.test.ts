import { readFileSync } from "node:fs";
import { OPERATIONS, WEBHOOK_EVENT_TYPES } from "@payments/contract/operations";
import { rebaseExamples } from "@payments/server/served-document";
import type { Browser, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { OPENAPI_31_PATH } from "../../support/openapi.ts";
import type { TestServer } from "../../support/server.ts";
import {
  actionsOf,
  browserSuite,
  DESKTOP,
  expectAccessible,
  expectSameOrigin,
  horizontalOverflow,
  screenshots,
  tabThrough,
  type Watched,
  WIDTHS,
  watch,
} from "../support.ts";

// The API reference (/docs): Redoc, bundled locally, rendering the document the server runs on, with
// every operation, the webhooks and the signature rules; a strict CSP and nothing from another host.
// The error reference (/docs/errors): every error code, where each problem's `type` points.

/** The generated document, as committed. */
const contract = () => JSON.parse(readFileSync(OPENAPI_31_PATH, "utf8"));

describe("the API reference", { timeout: 120_000 }, () => {
  let server: TestServer;
  let page: Page;
  let watched: Watched;

  browserSuite((suite) => {
    ({ server, page, watched } = suite);
  });

  it("is served with a strict Content-Security-Policy: scripts from this server only, none inline", async () => {
    const res = await fetch(`${server.url}/docs`);
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).not.toMatch(/unsafe-eval/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//); // no other host
  });

  it("serves the document the server runs on, naming this server", async () => {
    const served = await (await fetch(`${server.url}/docs/openapi.json`)).json();
    const { servers, ...rest } = served;
    // The contract, with its examples' links (problem types, payment link pages) on this server.
    const { servers: _, ...document } = rebaseExamples(contract(), server.url);
    expect(rest).toEqual(document);
    expect(servers).toEqual([{ url: server.url, description: "This server" }]);
  });

  it("renders every operation and every webhook, with the signature rules", async () => {
    await page.goto(`${server.url}/docs`);
    await page.waitForSelector("body[data-rendered]");
    const ids = new Set(await page.evaluate(() => Array.from(document.querySelectorAll("[id]"), (e) => e.id)));
    const missing = OPERATIONS.filter((op) => !ids.has(`operation/${op.operationId}`)).map((op) => op.operationId);
    expect(missing).toEqual([]);
    const text = (await page.textContent("body")) ?? "";
    for (const type of WEBHOOK_EVENT_TYPES) expect(text, type).toContain(type);
    expect(ids.has("tag/Webhooks")).toBe(true);
    // The signature rules: the header, the signed string, the algorithm, and what a receiver answers.
    expect(text).toContain("X-Service-Signature");
    expect(text).toContain("t=<timestamp>,v1=<signature>");
    expect(text).toContain("HMAC-SHA256");
    expect(text).toMatch(/answer 401/);
    // Every operation is titled by its summary.
    const doc = contract() as { paths: Record<string, Record<string, { summary?: string }>> };
    for (const item of Object.values(doc.paths))
      for (const op of Object.values(item)) expect(text).toContain(op.summary);
    await screenshots(page, "docs", false);
  });

  it("has no serious accessibility violation, and the keyboard reaches its bar, search and menu", async () => {
    await expectAccessible(page, "the API reference");
    // Redoc's page has some 1,500 focusable elements; Tab is followed through the first screenful:
    // the bar's links, the search box and the menu's entries.
    const reached = await tabThrough(page, 40);
    const bar = (await actionsOf(page)).filter((a) =>
      /^a\|(Payments API reference|Error reference|OpenAPI document|Console)$/.test(a),
    );
    for (const link of bar) expect(reached).toContain(link);
    expect(reached.some((r) => r.startsWith("input|"))).toBe(true);
    expect(reached.some((r) => /Merchants/.test(r))).toBe(true);
  }, 180_000); // axe reads every node of a page this large

  it("loaded nothing from another host and broke no CSP rule", async () => {
    expectSameOrigin(watched, new URL(server.url).origin);
    expect(watched.problems).toEqual([]);
  });
});

describe("the error reference", { timeout: 120_000 }, () => {
  let server: TestServer;
  let browser: Browser;

  browserSuite((suite) => {
    ({ server, browser } = suite);
  });

  it("is where a problem's type points: the entry for its code, on this server", async () => {
    const problem = await (await fetch(`${server.url}/v1/merchants`)).json();
    expect(problem.type).toBe(`${server.url}/docs/errors#unauthorized`);
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    const watched = watch(page);
    await page.goto(problem.type);
    const entry = page.locator("section:target");
    expect(await entry.getAttribute("id")).toBe("unauthorized");
    expect(await entry.textContent()).toMatch(/401\s*Unauthorized/);

    // Every code of the contract has its entry.
    const doc = contract() as { components: { schemas: { ErrorCode: { anyOf: { enum?: string[] }[] } } } };
    for (const code of doc.components.schemas.ErrorCode.anyOf[0]?.enum ?? []) {
      expect(await page.locator(`section[id="${code}"]`).count(), code).toBe(1);
    }
    await expectAccessible(page, "the error reference");
    const actions = await actionsOf(page);
    const reached = await tabThrough(page);
    expect(actions.filter((a) => !reached.includes(a))).toEqual([]);
    await screenshots(page, "docs-errors", false);
    expectSameOrigin(watched, new URL(server.url).origin);
    expect(watched.problems).toEqual([]);
    await context.close();
  });

  it("gives each code the status the contract answers it with: card_declined under no status, since no operation answers it", async () => {
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    await page.goto(`${server.url}/docs/errors`);
    const status = (code: string) => page.locator(`section[id="${code}"] .status`).allTextContents();
    expect(await status("insufficient_balance")).toEqual(["422"]);
    expect(await status("unauthorized")).toEqual(["401"]);
    expect(await status("card_declined")).toEqual([]);
    expect(await page.locator(".status").filter({ hasText: /^402$/ }).count()).toBe(0);
    // The codes no operation answers with are under a heading that says so.
    const unanswered = await page
      .locator("#no-operation ~ section")
      .evaluateAll((sections) => sections.map((s) => s.id));
    expect(unanswered).toContain("card_declined");
    await context.close();
  });

  it("fits a phone (390 px), 1024 and 1280 px: nothing pushed off-screen or scrolling sideways", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/docs/errors`);
    const found: string[] = [];
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 800 });
      for (const problem of await horizontalOverflow(page, "body")) found.push(`at ${width} px: ${problem}`);
    }
    await expectAccessible(page, "the error reference on a phone");
    await screenshots(page, "docs-errors-phone");
    expect(found).toEqual([]);
    await context.close();
  });
});
