import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { unwrap } from "@payments/client";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  clientFor,
  createCharge,
  createFraudListItem,
  createMerchant,
  createPixCharge,
  createToken,
  fundedMerchant,
} from "../../e2e/fixtures.ts";
import type { TestServer } from "../../support/server.ts";
import {
  horizontalOverflow,
  launch,
  PHONE_WIDTH,
  POLL,
  screenshots,
  signIn,
  startBrowserServer,
  WIDTHS,
} from "../support.ts";

// Every page of the console at the widths people use (a phone at 390 px, 1024 and 1280 px), with data
// as long as real data gets (a merchant's full legal name, a webhook URL with a path and query, a
// receiver that answers with an HTML error page), and every expandable part expanded (a delivery's
// attempts): nothing in the page is pushed off-screen or scrolls sideways. On a phone a data table may
// scroll inside its own named, focusable region (docs/console.md "The console"); nothing else may.

/** What sticks out of a console page at `width` (support.ts horizontalOverflow). */
const overflowAt = (page: Page, width: number) =>
  horizontalOverflow(page, "main", { scrollingTables: width === PHONE_WIDTH });

describe("console pages at phone and desktop widths", { timeout: 480_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let receiver: Server;
  const routes: { route: string; what: string }[] = [];
  let attemptLog = { deliveryId: "", eventId: "", endpointId: "" };
  const named = { merchant: "", funded: "" };

  beforeAll(async () => {
    server = await startBrowserServer({ WEBHOOK_POLL_INTERVAL_MS: "50" });
    // A receiver that is down: an HTML error page, so every attempt logs a status, a latency and a body.
    receiver = createServer((req, res) => {
      req.resume();
      req.on("end", () =>
        res
          .writeHead(503, { "content-type": "text/html" })
          .end(
            "<html><head><title>503 Service Temporarily Unavailable</title></head><body><center><h1>503 Service Temporarily Unavailable</h1></center><hr><center>nginx/1.25.3</center></body></html>",
          ),
      );
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/integrations/payments/webhooks/v1/receive?tenant=acme-coffee-roasters-international`;

    const api = clientFor(server, server.sandboxKey);
    const merchant = await createMerchant(api, "Acme Coffee Roasters & Bakery International Trading Company Ltd");
    const token = await createToken(api);
    const charge = unwrap(
      await api.POST("/v1/charges", {
        body: {
          merchant_id: merchant.id,
          amount: 1_234_567,
          currency: "USD",
          payment_method: { type: "card", token: token.id },
          description:
            "Order #1042: two kilograms of single-origin Ethiopian Yirgacheffe, whole bean, delivered monthly",
        },
      }),
    );
    unwrap(await api.POST("/v1/charges/{id}/refunds", { params: { path: { id: charge.id } }, body: { amount: 500 } }));
    await createCharge(api, { amount: 2500 });
    await createPixCharge(api);
    const link = unwrap(
      await api.POST("/v1/payment_links", {
        body: {
          merchant_id: merchant.id,
          amount: 250_000,
          currency: "USD",
          description: "Annual subscription to the roastery's coffee club, with free delivery anywhere in the country",
        },
      }),
    );
    unwrap(
      await api.POST("/v1/sandboxes", {
        body: { name: "QA regression run for the Acme Coffee Roasters & Bakery International checkout, nightly" },
      }),
    );
    const funded = await fundedMerchant(api, 500_000);
    const cashout = unwrap(
      await api.POST("/v1/cashouts", {
        body: {
          merchant_id: funded.id,
          amount: 250_000,
          currency: "USD",
          destination: {
            type: "iban",
            iban: "DE89 3704 0044 0532 0130 00",
            account_holder: "Acme Coffee Roasters & Bakery International Trading Company Ltd",
          },
        },
      }),
    );
    named.merchant = merchant.id;
    named.funded = funded.id;
    const listItem = await createFraudListItem(api);
    unwrap(
      await api.POST("/v1/fraud/evaluations", {
        body: { amount: 2500, currency: "USD", card: { token: token.id }, customer: { email: "ada@example.com" } },
      }),
    );
    const endpoint = unwrap(
      await api.POST("/v1/webhook_endpoints", {
        body: { url: receiverUrl, enabled_events: ["*"], description: "Order fulfilment, invoicing and the warehouse" },
      }),
    );
    // A test event to the receiver that is down; its attempts are waited for in the test.
    const delivery = unwrap(
      await api.POST("/v1/webhook_endpoints/{id}/test", { params: { path: { id: endpoint.id } } }),
    );
    attemptLog = { deliveryId: delivery.id, eventId: delivery.event_id, endpointId: endpoint.id };
    // A request with a long path, for the request log.
    await fetch(`${server.url}/v1/charges?merchant_id=${merchant.id}&status=captured&limit=100`, {
      headers: { authorization: `Bearer ${server.sandboxKey}` },
    });

    routes.push(
      { route: "keys", what: "the service keys" },
      { route: "webhooks", what: "the webhook endpoints" },
      { route: `webhooks/${endpoint.id}`, what: "a webhook endpoint with its attempt log" },
      { route: "events", what: "the events" },
      { route: `events/${delivery.event_id}`, what: "an event with its deliveries" },
      { route: "charges", what: "the charges" },
      { route: `charges/${charge.id}`, what: "a charge with its refunds" },
      { route: "payment-links", what: "the payment links" },
      { route: `payment-links/${link.id}`, what: "a payment link" },
      { route: "merchants", what: "the merchants" },
      { route: `merchants/${merchant.id}`, what: "a merchant with its balance" },
      { route: "cashouts", what: "the cashouts" },
      { route: `cashouts/${cashout.id}`, what: "a cashout" },
      { route: `tokens/${token.id}`, what: "a token" },
      { route: "fraud", what: "the fraud evaluations" },
      { route: "fraud/lists", what: "the fraud value lists" },
      { route: `fraud/lists/${listItem.list_id}`, what: "a value list with its items" },
      { route: "fraud/settings", what: "the fraud settings" },
      { route: "requests", what: "the request log" },
      { route: "clock", what: "the sandbox clock" },
      { route: "sandboxes", what: "the sandboxes on demand" },
    );

    browser = await launch();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    await signIn(page, server.url, server.sandboxKey);
  }, 240_000); // much to make on a busy two-core machine, and the pages may be rebuilt first
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await new Promise<void>((resolve) => receiver?.close(() => resolve()));
  });

  /** Opens a console address afresh, waits for it to load, and expands everything that expands. */
  async function show(route: string): Promise<void> {
    await page.goto(`${server.url}/console#/${route}`);
    await page.reload();
    await page.locator("main h1").first().waitFor();
    await page.waitForFunction(
      () =>
        !document.querySelector("main[aria-busy]") &&
        !document.querySelector("main")?.textContent?.includes("Loading…"),
    );
    await page.evaluate(() => {
      for (const d of document.querySelectorAll("main details")) (d as HTMLDetailsElement).open = true;
    });
    for (const toggle of await page.locator("main button[aria-expanded='false']").all()) await toggle.click();
  }

  it("lays out every page within the screen at 390, 1024 and 1280 px", async () => {
    expect(routes.length).toBeGreaterThanOrEqual(20);
    // The test event fails, then is redelivered by hand: an attempt log with several rows.
    const api = clientFor(server, server.sandboxKey);
    const attempts = async () =>
      unwrap(await api.GET("/v1/webhook_deliveries/{id}", { params: { path: { id: attemptLog.deliveryId } } }))
        .attempt_count;
    await expect.poll(attempts, POLL).toBeGreaterThan(0);
    unwrap(
      await api.POST("/v1/events/{id}/redeliver", {
        params: { path: { id: attemptLog.eventId } },
        body: { endpoint_id: attemptLog.endpointId },
      }),
    );
    await expect.poll(attempts, POLL).toBeGreaterThan(1);

    const found: string[] = [];
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 800 });
      for (const { route, what } of routes) {
        await show(route);
        for (const problem of await overflowAt(page, width))
          found.push(`${what} (#/${route}) at ${width} px: ${problem}`);
      }
    }
    await show(routes[2]?.route ?? "webhooks");
    await screenshots(page, "console-attempts-expanded");
    expect(found).toEqual([]);
  });

  it("lays out the sign-in page, with a refused key's message, within the screen at 390, 1024 and 1280 px", async () => {
    const signedOut = await (await browser.newContext({ viewport: { width: 1024, height: 800 } })).newPage();
    await signedOut.goto(`${server.url}/console`);
    await signedOut.getByLabel("Service key", { exact: true }).fill(`key_test_${"x".repeat(32)}`);
    await signedOut.getByRole("button", { name: "Sign in" }).click();
    await signedOut.getByRole("alert").filter({ hasText: "not accepted" }).waitFor();
    const found: string[] = [];
    for (const width of WIDTHS) {
      await signedOut.setViewportSize({ width, height: 800 });
      for (const problem of await horizontalOverflow(signedOut))
        found.push(`the sign-in page at ${width} px: ${problem}`);
    }
    await signedOut.context().close();
    expect(found).toEqual([]);
  });

  it("shows merchants by name, with their id, where lists and pages name a merchant", async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    const name = "Acme Coffee Roasters & Bakery International Trading Company Ltd";
    for (const route of ["charges", "payment-links", routes.find((r) => r.route.startsWith("charges/"))?.route ?? ""]) {
      await show(route);
      const cell = page.locator("main .named").filter({ hasText: named.merchant }).first();
      expect(await cell.getByRole("link").textContent(), route).toBe(name);
      expect(await cell.getByRole("link").getAttribute("href"), route).toBe(`#/merchants/${named.merchant}`);
      expect(await cell.locator("code").textContent(), route).toBe(named.merchant);
    }
    await show("cashouts");
    expect(await page.locator("main .named code").first().textContent()).toBe(named.funded);
    expect(await page.locator("main .named a").first().textContent()).toBe("Acme Coffee");
  });

  it("lays out the sandbox clock after an advance, with what ran, within the screen at 390, 1024 and 1280 px", async () => {
    await page.setViewportSize({ width: PHONE_WIDTH, height: 844 });
    await show("clock");
    await page.getByRole("button", { name: "+1 week" }).click();
    await page.getByRole("heading", { level: 2, name: "What ran" }).waitFor();
    const found: string[] = [];
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 800 });
      for (const problem of await overflowAt(page, width))
        found.push(`the clock after an advance at ${width} px: ${problem}`);
    }
    await screenshots(page, "console-sandbox-clock-advanced");
    expect(found).toEqual([]);
  });

  it("would notice a page pushed off-screen (the check is not blind)", async () => {
    await page.setViewportSize({ width: 1024, height: 800 });
    await show("charges");
    await page.evaluate(() => {
      const wide = document.createElement("p");
      wide.textContent = "x".repeat(400);
      wide.style.whiteSpace = "nowrap";
      document.querySelector("main")?.append(wide);
    });
    expect((await horizontalOverflow(page)).join("\n")).toMatch(/reaches past the right edge/);
  });

  it("would notice a table scrolling sideways at a desktop width, and the page scrolling sideways on a phone", async () => {
    await page.setViewportSize({ width: 1024, height: 800 });
    await show("charges");
    await page.evaluate(() => {
      const cell = document.querySelector("main table td");
      if (cell) cell.textContent = "y".repeat(400);
    });
    expect((await overflowAt(page, 1024)).join("\n")).toMatch(/scrolls or clips its content sideways/);
    await page.setViewportSize({ width: PHONE_WIDTH, height: 844 });
    await show("charges");
    await page.evaluate(() => {
      const wide = document.createElement("div");
      wide.style.width = "600px";
      wide.textContent = "wide";
      document.body.append(wide);
    });
    expect((await overflowAt(page, PHONE_WIDTH)).join("\n")).toMatch(/the page scrolls sideways/);
  });
});
