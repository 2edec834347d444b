import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { unwrap } from "@payments/client";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  clientFor,
  createCharge,
  createFraudListItem,
  createMerchant,
  createToken,
  REVIEW_CARD,
  VISA,
} from "../../e2e/fixtures.ts";
import type { TestServer } from "../../support/server.ts";
import {
  checkPage,
  expectAccessible,
  expectNothingSecretStored,
  expectSameOrigin,
  launch,
  openConsole,
  POLL,
  screenshots,
  signIn,
  startBrowserServer,
  storage,
  type Watched,
  watch,
} from "../support.ts";

// Every page of the console against a real server: a charge made through the API appears and is
// refunded in the console; a key with only `vault` is offered no charge page or action; the request
// log shows a tokenization and a card number masked; webhook endpoints with their attempt log, test
// event and redelivery; the environment banner follows the key. Every page is checked by axe (no
// serious or critical violation) and by Tab (every action is reachable from the keyboard).

/** An exact time as the console shows it (`2026-11-28 10:19:44 UTC`), and as a number. */
const EXACT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/;
const utc = (text: string | undefined) => Date.parse(`${(text ?? "").replace(" UTC", "Z").replace(" ", "T")}`);

/** The terms and values of the nth details list (`dl.details`) of the page's main content. */
async function detailsOf(page: Page, nth: number): Promise<Record<string, string>> {
  return page
    .locator("main dl.details")
    .nth(nth)
    .evaluate((dl) => {
      const out: Record<string, string> = {};
      for (const dt of dl.querySelectorAll("dt")) out[dt.textContent ?? ""] = dt.nextElementSibling?.textContent ?? "";
      return out;
    });
}

describe("console pages", { timeout: 120_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let watched: Watched;
  let receiver: Server;
  let receiverUrl = "";
  let received = 0;

  beforeAll(async () => {
    server = await startBrowserServer({ WEBHOOK_POLL_INTERVAL_MS: "50" });
    receiver = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        received++;
        res.writeHead(200).end("ok");
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    browser = await launch();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    watched = watch(page);
    await signIn(page, server.url, server.sandboxKey);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await new Promise<void>((resolve) => receiver?.close(() => resolve()));
  });

  it("shows a charge made through the API and refunds it from the console", async () => {
    const api = clientFor(server, server.sandboxKey);
    const charge = await createCharge(api, { amount: 2500 });
    await openConsole(page, server.url, "charges", "Charges");
    await page.getByRole("link", { name: charge.id }).waitFor();
    await checkPage(page, "the charges list", "console-charges");

    await page.getByRole("link", { name: charge.id }).click();
    await page.getByRole("heading", { level: 1, name: /USD 25\.00 · captured/ }).waitFor();
    await checkPage(page, "a charge");
    await page.getByRole("button", { name: "Refund" }).click();
    const dialog = page.getByRole("dialog", { name: "Refund the charge" });
    await dialog.getByLabel(/Amount in minor units/).fill("500");
    expect(await dialog.getByText("USD 5.00").count()).toBe(1);
    await dialog.getByLabel("Reason").selectOption("requested_by_customer");
    await expectAccessible(page, "the refund dialog");
    await dialog.getByRole("button", { name: "Refund" }).click();
    await page.getByRole("heading", { level: 1, name: /partially refunded/ }).waitFor();
    await page.getByRole("table", { name: "Refunds" }).waitFor();
    await screenshots(page, "console-charge");

    const refunds = unwrap(await api.GET("/v1/charges/{id}/refunds", { params: { path: { id: charge.id } } }));
    expect(refunds.data.map((r) => [r.amount, r.reason])).toEqual([[500, "requested_by_customer"]]);
    // The console's request went through the API and is logged as the console's (within a moment).
    await expect
      .poll(async () => {
        const log = unwrap(await api.GET("/v1/request_log", { params: { query: { method: "POST", limit: 100 } } }));
        return log.data.some(
          (e) => e.path === `/v1/charges/${charge.id}/refunds` && e.source === "console" && e.status === 201,
        );
      }, POLL)
      .toBe(true);
  });

  it("captures, voids and settles reviews, each only where the charge's state allows", async () => {
    const api = clientFor(server, server.sandboxKey);
    const authorized = await createCharge(api, { amount: 1200, capture: false });
    await openConsole(page, server.url, `charges/${authorized.id}`, /authorized/);
    expect(await page.getByRole("button", { name: "Refund" }).count()).toBe(0);
    await page.getByRole("button", { name: "Capture" }).click();
    await page.getByRole("dialog", { name: "Capture the charge" }).getByRole("button", { name: "Capture" }).click();
    await page.getByRole("heading", { level: 1, name: /captured/ }).waitFor();

    const toVoid = await createCharge(api, { amount: 1300, capture: false });
    await openConsole(page, server.url, `charges/${toVoid.id}`, /authorized/);
    await page.getByRole("button", { name: "Void" }).click();
    await page.getByRole("dialog", { name: "Void this charge?" }).getByRole("button", { name: "Void charge" }).click();
    await page.getByRole("heading", { level: 1, name: /voided/ }).waitFor();
    expect(await page.getByText("No action applies to this charge now.").count()).toBe(1);

    const held = await createCharge(api, { card: REVIEW_CARD });
    await openConsole(page, server.url, `charges/${held.id}`, /authorized/);
    expect(await page.getByRole("button", { name: "Capture" }).count()).toBe(0);
    await checkPage(page, "a charge held for review");
    await page.getByRole("button", { name: "Approve review" }).click();
    await page.getByRole("heading", { level: 1, name: /captured/ }).waitFor();
  });

  it("shows merchants with their balance, and creates one", async () => {
    const api = clientFor(server, server.sandboxKey);
    const merchant = await createMerchant(api, "Balance Roasters");
    const token = await createToken(api);
    unwrap(
      await api.POST("/v1/charges", {
        body: {
          merchant_id: merchant.id,
          amount: 4200,
          currency: "EUR",
          payment_method: { type: "card", token: token.id },
        },
      }),
    );
    await openConsole(page, server.url, "merchants", "Merchants");
    await checkPage(page, "the merchants list", "console-merchants");
    await page.getByRole("link", { name: "Balance Roasters" }).first().click();
    await page.getByRole("table", { name: "Balance per currency" }).waitFor();
    expect(await page.getByRole("row", { name: /EUR/ }).textContent()).toContain("EUR 42.00");
    await checkPage(page, "a merchant");
    await page.getByRole("button", { name: "Edit" }).click();
    const dialog = page.getByRole("dialog", { name: /Edit/ });
    await dialog.getByLabel("Status").selectOption("suspended");
    await dialog.getByRole("button", { name: "Save" }).click();
    await expect
      .poll(
        async () => unwrap(await api.GET("/v1/merchants/{id}", { params: { path: { id: merchant.id } } })).status,
        POLL,
      )
      .toBe("suspended");

    await openConsole(page, server.url, "merchants", "Merchants");
    await page.getByRole("button", { name: "Create merchant" }).click();
    const create = page.getByRole("dialog", { name: "Create a merchant" });
    // A name of spaces passes the browser's `required` but not the API (trimmed, it is empty): the
    // problem stands beside the Name field, which it marks, and the dialog stays open to correct it.
    await create.getByLabel("Name").fill("   ");
    await create.getByRole("button", { name: "Create merchant" }).click();
    await expect.poll(() => create.getByRole("alert").textContent(), POLL).toContain("Name (name): ");
    expect(await create.getByLabel("Name").getAttribute("aria-invalid")).toBe("true");
    expect(await create.locator(".field-error").count()).toBe(1);
    await expectAccessible(page, "the create-merchant dialog with a refused name");
    await create.getByLabel("Name").fill("Console Bakery");
    await create.getByRole("button", { name: "Create merchant" }).click();
    await page.getByRole("heading", { level: 1, name: "Console Bakery" }).waitFor();
  });

  it("filters and pages lists with the API's filters and cursors", async () => {
    const api = clientFor(server, server.sandboxKey);
    for (let i = 0; i < 22; i++) await createMerchant(api, `Paged merchant ${i}`);
    await openConsole(page, server.url, "merchants", "Merchants");
    const names = () => page.getByRole("table", { name: "Merchants" }).getByRole("rowheader").allTextContents();
    const first = await names();
    expect(first).toHaveLength(20);
    expect(first[0]).toBe("Paged merchant 21");
    await page.getByRole("button", { name: "Older →" }).click();
    await expect.poll(async () => (await names())[0], POLL).not.toBe(first[0]);
    const second = await names();
    expect(second.some((n) => first.includes(n))).toBe(false);
    await page.getByRole("button", { name: "← Newer" }).click();
    await expect.poll(names, POLL).toEqual(first);
    // A filter is a query parameter of the list operation.
    await page.getByLabel("Status").selectOption("suspended");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await expect.poll(names, POLL).toEqual(["Balance Roasters"]);
    expect(page.url()).toContain("status=suspended");
  });

  it("records a tokenization in the request log, and masks a card number sent in a path", async () => {
    const api = clientFor(server, server.sandboxKey);
    await createToken(api, VISA);
    const probe = await fetch(`${server.url}/v1/tokens/${VISA}?card=${VISA}`, {
      headers: { authorization: `Bearer ${server.sandboxKey}` },
    });
    expect(probe.status).toBe(400);
    const probeId = probe.headers.get("request-id") ?? "";
    await expect
      .poll(
        async () => {
          await openConsole(page, server.url, "requests", "Request log");
          return page.getByText(probeId).count();
        },
        { timeout: 20_000, interval: 300 },
      )
      .toBe(1);
    const table = page.getByRole("table", { name: "Requests" });
    const tokenizations = table
      .getByRole("row")
      .filter({ has: page.getByRole("rowheader", { name: "/v1/tokens", exact: true }) });
    expect(await tokenizations.filter({ hasText: "POST" }).count()).toBeGreaterThan(0);
    const probeRow = table.getByRole("row").filter({ hasText: probeId });
    expect(await probeRow.textContent()).toContain("/v1/tokens/4242********4242?card=4242********4242");
    expect(await page.content()).not.toContain(VISA);
    await checkPage(page, "the request log", "console-request-log");
    // Filtered by outcome, through the operation's own filter.
    await page.getByLabel("Outcome").selectOption("failed");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(/outcome=failed/);
    const statuses = () =>
      page.getByRole("table", { name: "Requests" }).locator("tbody tr td:nth-child(4)").allTextContents();
    await expect
      .poll(async () => (await statuses()).length > 0 && (await statuses()).every((s) => Number(s) >= 400), POLL)
      .toBe(true);
    expectNothingSecretStored(await storage(context, page), [server.sandboxKey, VISA]);
  });

  it("manages webhook endpoints: create (secret once), edit events, test event, attempt log, redeliver, rotate", async () => {
    await openConsole(page, server.url, "webhooks", "Webhook endpoints");
    await checkPage(page, "the webhook endpoints list");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const dialog = page.getByRole("dialog", { name: "Add a webhook endpoint" });
    // The API's refusal of the URL stands beside the URL field (the browser takes it as a URL).
    await dialog.getByLabel("URL").fill("http://user:secret@127.0.0.1/hooks");
    await dialog.getByLabel("payment.captured").check();
    await dialog.getByRole("button", { name: "Add endpoint" }).click();
    await expect
      .poll(() => dialog.locator(".field-error").textContent(), POLL)
      .toBe("must not contain a user name or password (deliveries are authenticated by their signature)");
    expect(await dialog.getByLabel("URL").getAttribute("aria-invalid")).toBe("true");
    expect(await dialog.getByRole("alert").textContent()).toContain("URL (url): ");
    await dialog.getByLabel("URL").fill(receiverUrl);
    await dialog.getByLabel("Description (optional)").fill("Order fulfilment");
    await dialog.getByLabel("payment.captured").check();
    await expectAccessible(page, "the add-endpoint dialog");
    await dialog.getByRole("button", { name: "Add endpoint" }).click();
    const secretDialog = page.getByRole("dialog", { name: /signing secret/ });
    const secret = (await secretDialog.locator("code.secret").textContent()) ?? "";
    expect(secret).toMatch(/^whsec_/);
    await secretDialog.getByRole("button", { name: "I have stored it" }).click();
    await page.getByRole("heading", { level: 1, name: receiverUrl }).waitFor();
    expect(await page.content()).not.toContain(secret);

    // Edit the events it receives.
    await page.getByRole("button", { name: "Edit events and status" }).click();
    const edit = page.getByRole("dialog", { name: "Edit the endpoint" });
    await edit.getByLabel("payment.refunded").check();
    await edit.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => page.locator("dd").filter({ hasText: "payment.refunded" }).count(), POLL).toBe(1);

    // A test event reaches the receiver and shows in the attempt log.
    await page.getByRole("button", { name: "Send test event" }).click();
    await expect.poll(() => received, { timeout: 20_000 }).toBeGreaterThan(0);
    const deliveries = page.getByRole("table", { name: "Deliveries" });
    await expect
      .poll(
        async () => {
          await page.reload();
          await deliveries.waitFor();
          return deliveries.getByRole("row").filter({ hasText: "succeeded" }).count();
        },
        { timeout: 20_000, interval: 300 },
      )
      .toBe(1);
    await page.getByText("Attempts (1)").click();
    await expect.poll(() => deliveries.locator("table.compact").textContent(), POLL).toContain("200");
    await checkPage(page, "a webhook endpoint with its attempt log", "console-webhook-endpoint");

    // Redeliver: one more attempt of the same delivery, logged as the manual one it is.
    const before = received;
    await deliveries.getByRole("button", { name: /^Redeliver/ }).click();
    await expect.poll(() => received, { timeout: 20_000 }).toBe(before + 1);
    await expect
      .poll(
        async () => {
          await page.reload();
          await deliveries.waitFor();
          await page.getByRole("button", { name: /^Attempts \(/ }).click();
          const rows = deliveries.locator("table.compact tbody tr");
          return rows.evaluateAll((trs) => trs.map((tr) => tr.children[2]?.textContent));
        },
        { timeout: 20_000, interval: 300 },
      )
      .toEqual(["manual", "manual"]);

    // The event's own page shows its deliveries (the attempt log per event).
    await deliveries.getByRole("link", { name: /^evt_/ }).first().click();
    await page.getByRole("heading", { level: 1, name: "webhook_endpoint.test" }).waitFor();
    await page.getByRole("table", { name: "Deliveries" }).waitFor();
    await checkPage(page, "an event with its deliveries", "console-event");

    // Rotate the signing secret, choosing the grace period.
    await page.goBack();
    await page.getByRole("heading", { level: 1, name: receiverUrl }).waitFor();
    await page.getByRole("button", { name: "Rotate secret" }).click();
    const rotate = page.getByRole("dialog", { name: "Rotate the signing secret" });
    await rotate.getByLabel("Grace period for the old secret").selectOption("3600");
    await rotate.getByRole("button", { name: "Rotate secret" }).click();
    const rotated =
      (await page
        .getByRole("dialog", { name: /new signing secret/ })
        .locator("code.secret")
        .textContent()) ?? "";
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await page.getByRole("button", { name: "I have stored it" }).click();
    await expect
      .poll(
        () =>
          page
            .locator("dd")
            .filter({ has: page.locator("time") })
            .count(),
        POLL,
      )
      .toBeGreaterThan(1);
  });

  it("lists events, filtered by type", async () => {
    await openConsole(page, server.url, "events", "Events");
    await page.getByLabel("Type").selectOption("payment.refunded");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(/type=payment\.refunded/);
    const types = () => page.getByRole("table", { name: "Events" }).locator("tbody td:nth-child(2)").allTextContents();
    await expect.poll(async () => [...new Set(await types())], POLL).toEqual(["payment.refunded"]);
    await checkPage(page, "the events list", "console-events");
  });

  it("shows fraud evaluations, value lists and settings", async () => {
    const api = clientFor(server, server.sandboxKey);
    const item = await createFraudListItem(api);
    await openConsole(page, server.url, "fraud", "Fraud evaluations");
    await checkPage(page, "fraud evaluations");
    await openConsole(page, server.url, "fraud/lists", "Value lists");
    await checkPage(page, "fraud lists");
    // Create a list: a name of spaces is refused beside its field; then one is made and shown.
    await page.getByRole("button", { name: "Create list" }).click();
    const create = page.getByRole("dialog", { name: "Create a value list" });
    await create.getByLabel("Name").fill("   ");
    await create.getByLabel("Kind of values").selectOption("email_domain");
    await create.getByRole("button", { name: "Create list" }).click();
    await expect.poll(() => create.getByRole("alert").textContent(), POLL).toContain("Name (name): ");
    expect(await create.getByLabel("Name").getAttribute("aria-invalid")).toBe("true");
    await expectAccessible(page, "the create-list dialog with a refused name");
    await create.getByLabel("Name").fill("Console blocklist");
    await create.getByRole("button", { name: "Create list" }).click();
    await page.getByRole("heading", { level: 1, name: "Console blocklist" }).waitFor();
    expect(await page.getByRole("button", { name: "Add value" }).count()).toBe(1);
    await openConsole(page, server.url, `fraud/lists/${item.list_id}`, "Fixture list");
    await page.getByLabel("Value (email)").fill("blocked@example.com");
    await page.getByRole("button", { name: "Add value" }).click();
    await page.getByRole("rowheader", { name: "blocked@example.com" }).waitFor();
    await checkPage(page, "a fraud list");
    await openConsole(page, server.url, "fraud/settings", "Fraud settings");
    await checkPage(page, "fraud settings");
  });

  it("looks up and deletes a token (card numbers never pass through the console)", async () => {
    const api = clientFor(server, server.sandboxKey);
    const token = await createToken(api);
    await openConsole(page, server.url, `tokens/${token.id}`, "Tokens");
    await page.getByRole("heading", { level: 2, name: token.id }).waitFor();
    expect(await page.content()).not.toContain(VISA);
    await checkPage(page, "a token");
    await page.getByRole("button", { name: "Delete token" }).click();
    await page
      .getByRole("dialog", { name: "Delete this token?" })
      .getByRole("button", { name: "Delete token" })
      .click();
    await expect
      .poll(
        async () => (await api.GET("/v1/tokens/{id}", { params: { path: { id: token.id } } })).response.status,
        POLL,
      )
      .toBe(404);
  });

  it("shows the sandbox clock and advances it by a day: the new time and offset at once, and what ran, From and To as exact times", async () => {
    await openConsole(page, server.url, "clock", "Sandbox clock");
    expect(await page.getByText("none: the sandbox runs on the server's time").count()).toBe(1);
    const before = await detailsOf(page, 0);
    await page.getByRole("button", { name: "+1 day" }).click();
    await page.getByRole("heading", { level: 2, name: "What ran" }).waitFor();
    const clock = await fetch(`${server.url}/v1/sandbox/clock`, {
      headers: { authorization: `Bearer ${server.sandboxKey}` },
    }).then((r) => r.json() as Promise<{ offset_seconds: number; now: string }>);
    expect(clock.offset_seconds).toBeGreaterThan(86_400 - 60);
    // The clock shown is the one after the advance, without a reload.
    const after = await detailsOf(page, 0);
    expect(after.Offset).toMatch(/^1 d 0 h \d+ min ahead of the server's time$|^0 d 23 h 59 min ahead/);
    expect(utc(after["Sandbox time"]) - utc(before["Sandbox time"])).toBeGreaterThanOrEqual(86_400_000);
    // What ran: exact times a day apart (relative to the sandbox's now, both would say nothing).
    const ran = await detailsOf(page, 1);
    expect(ran.From).toMatch(EXACT);
    expect(ran.To).toBe(after["Sandbox time"]);
    expect(utc(ran.To) - utc(ran.From)).toBeGreaterThanOrEqual(86_400_000);
    expect(ran["Moved by"]).toBe("1 day");
    await checkPage(page, "the sandbox clock", "console-sandbox-clock");
    await openConsole(page, server.url, "clock", "Sandbox clock");
    expect(await page.getByText(/^1 d 0 h \d+ min ahead of the server's time$|^0 d 23 h 59 min ahead/).count()).toBe(1);
  });

  it("shows what is made on the advanced sandbox clock as made just now, never in the future; keys and the request log on the server's clock", async () => {
    // The previous test moved the sandbox clock a day ahead.
    const api = clientFor(server, server.sandboxKey);
    const charge = await createCharge(api);
    await openConsole(page, server.url, "charges", "Charges");
    const created = page.locator(`main time[datetime="${charge.created_at}"]`);
    expect(await created.textContent()).toMatch(/^(just now|1 minute ago)$/);
    expect(await created.getAttribute("title")).toMatch(/ UTC, sandbox time$/);
    // Times the page shows that lie in the future ("in 1 day", "tomorrow"); none of these is an expiry.
    const future = async () =>
      (await page.locator("main time").allTextContents()).filter((t) => /^in |^tomorrow$|^next /.test(t));
    expect(await future()).toEqual([]);
    await openConsole(page, server.url, `charges/${charge.id}`, / · /);
    expect(await future()).toEqual([]);
    await openConsole(page, server.url, "events", "Events");
    expect(await future()).toEqual([]);
    // Keys and the request log stay on the server's clock: made today, not "yesterday".
    await openConsole(page, server.url, "keys", "Service keys");
    expect(await page.locator("main time").allTextContents()).not.toContainEqual("yesterday");
    await openConsole(page, server.url, "requests", "Request log");
    expect(await page.locator("main time").allTextContents()).not.toContainEqual("yesterday");
    expect(await future()).toEqual([]);

    // A key that may not read the sandbox clock (scope `*` only) gets exact times, said to be sandbox time.
    const reader = await server.key(["charges"], { name: "charges only" });
    const other = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const second = await other.newPage();
    await signIn(second, server.url, reader);
    await openConsole(second, server.url, "charges", "Charges");
    const exact = second.locator(`main time[datetime="${charge.created_at}"]`);
    expect(await exact.textContent()).toMatch(EXACT);
    expect(await exact.getAttribute("title")).toMatch(/^Sandbox time: /);
    await other.close();
  });

  it("loaded nothing from another host, logged no error, and kept no key or card number", async () => {
    expectSameOrigin(watched, new URL(server.url).origin);
    // The browser logs each refused request; these are the three the tests provoked (the 400s of the
    // merchant's and the endpoint's dialogs, then the value list's), and nothing else went wrong.
    const refused = /^Failed to load resource: the server responded with a status of (400) /;
    expect(watched.problems.filter((p) => !refused.test(p))).toEqual([]);
    expect(watched.problems.map((p) => refused.exec(p)?.[1])).toEqual(["400", "400", "400"]);
    expectNothingSecretStored(await storage(context, page), [server.sandboxKey, VISA]);
  });
});

describe("console: scopes and environments", { timeout: 120_000 }, () => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await startBrowserServer();
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("offers a key with only `vault` no charges page or action, and the server refuses them anyway", async () => {
    const api = clientFor(server, server.sandboxKey);
    const charge = await createCharge(api);
    const vault = await server.key(["vault"], { name: "vault only" });
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, server.url, vault);
    const nav = page.getByRole("navigation", { name: "Console" });
    expect(await nav.getByRole("list").getByRole("link").allTextContents()).toEqual(["Tokens"]);
    await page.getByRole("heading", { level: 1, name: "Tokens" }).waitFor();

    // Going to a charge's address by hand shows no charge and no action.
    await page.goto(`${server.url}/console#/charges/${charge.id}`);
    await page.getByRole("heading", { level: 1, name: "Tokens" }).waitFor();
    for (const name of ["Refund", "Capture", "Void", "Approve review", "Reject review"]) {
      expect(await page.getByRole("button", { name }).count(), name).toBe(0);
    }
    expect(await page.content()).not.toContain(charge.id.slice(3));
    // The page's own session, used by hand: the API answers 403.
    const statuses = await page.evaluate(async (id) => {
      const session = (await (await fetch("/console/session")).json()) as { csrf_token: string };
      const headers = { "X-CSRF-Token": session.csrf_token, "Content-Type": "application/json" };
      const list = await fetch("/console/api/v1/charges", { headers });
      const refund = await fetch(`/console/api/v1/charges/${id}/refunds`, { method: "POST", headers, body: "{}" });
      return [list.status, refund.status];
    }, charge.id);
    expect(statuses).toEqual([403, 403]);
    await expectAccessible(page, "the console of a vault key");
    await context.close();
  });

  it("shows a sandbox banner for a sandbox key and a production banner for a production key", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await signIn(page, server.url, server.sandboxKey);
    const banner = page.getByRole("note", { name: "Environment" });
    expect(await banner.textContent()).toMatch(/^Sandbox — test data/);
    expect(await page.evaluate(() => document.body.className)).toBe("sandbox");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Service key", { exact: true }).waitFor();

    const live = await server.key(["*"], { live: true, name: "production admin" });
    await signIn(page, server.url, live);
    expect(await banner.textContent()).toMatch(/^Production — live data/);
    expect(await page.evaluate(() => document.body.className)).toBe("production");
    const colors = await banner.evaluate((el) => getComputedStyle(el).backgroundColor);
    expect(colors).toBe("rgb(139, 26, 26)");
    await page.getByRole("table", { name: "Service keys" }).waitFor();
    // The sandbox clock exists only in the sandbox.
    expect(await page.getByRole("link", { name: "Sandbox clock" }).count()).toBe(0);
    // Production keys list only production keys.
    expect(await page.getByRole("table", { name: "Service keys" }).getByRole("rowheader").allTextContents()).toEqual([
      "production admin (you)",
    ]);
    await expectAccessible(page, "the production console");
    await screenshots(page, "console-production", false);
    await context.close();
  });
});
