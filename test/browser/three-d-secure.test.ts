/**
 * 3-D Secure on the hosted payment page (docs/three-d-secure.md) in a real headless Chromium: for each
 * 3-D Secure test card a payer pays a link, is sent to the sandbox issuer's challenge page when the card
 * asks for one, answers it (Complete or Fail, with the keyboard alone), comes back to the link's outcome
 * page and reads what happened; the challenge page fits a 390 px phone, passes axe-core, and nothing
 * leaves the server's origin or breaks its CSP.
 */
import { join } from "node:path";
import type { PaymentsClient } from "@payments/client";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { clientFor, createMerchant, createPaymentLink } from "../e2e/fixtures.ts";
import type { TestServer } from "../support/server.ts";
import {
  ARTIFACTS,
  accessibilityProblems,
  expectSameOrigin,
  launch,
  startBrowserServer,
  type Watched,
  watch,
} from "./support.ts";

const PHONE = { width: 390, height: 844 };

let server: TestServer;
let client: PaymentsClient;
let browser: Browser;

beforeAll(async () => {
  server = await startBrowserServer();
  client = clientFor(server, server.sandboxKey);
  browser = await launch();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

interface Visit extends Watched {
  context: BrowserContext;
  page: Page;
}
const visits: Visit[] = [];

async function open(): Promise<Visit> {
  const context = await browser.newContext({ viewport: PHONE, locale: "en-US" });
  const page = await context.newPage();
  const visit: Visit = { context, page, ...watch(page) };
  visits.push(visit);
  return visit;
}

afterEach(async () => {
  for (const visit of visits.splice(0)) {
    expectSameOrigin(visit, new URL(server.url).origin);
    const said = [...visit.messages, ...visit.problems];
    expect(said.filter((m) => /Content Security Policy|Refused to|^page error:/i.test(m))).toEqual([]);
    await visit.context.close();
  }
});

/** Pays a fresh EUR 18.00 link with `card` on the hosted page. */
async function pay(page: Page, card: string) {
  const merchant = await createMerchant(client, "Boulangerie Martin");
  const link = await createPaymentLink(client, {
    merchant_id: merchant.id,
    amount: 1800,
    currency: "EUR",
    description: "Croissants",
  });
  await page.goto(link.url);
  await page.getByLabel("Card number").fill(card);
  await page.getByLabel(/Expiry/).fill("12 / 31");
  await page.getByLabel("Security code").fill(card.startsWith("3") ? "1234" : "123");
  await page.getByLabel("Name on the card").fill("Camille Martin");
  await page.getByRole("button", { name: /^Pay / }).click();
  return link;
}

/** On the challenge page: checks it, then presses `button` with the keyboard alone. */
async function answer(page: Page, button: "Complete" | "Fail", screenshot?: string) {
  await page.waitForURL(/\/3ds\/tx_/);
  await page.getByRole("heading", { name: "Confirm this payment" }).waitFor();
  expect(await page.getByText("Card ending").textContent()).toMatch(/Card ending \d{4}/);
  expect(await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")).toBeLessThanOrEqual(0);
  expect(await accessibilityProblems(page)).toEqual([]);
  if (screenshot) await page.screenshot({ path: join(ARTIFACTS, screenshot), fullPage: true });
  const focused = () => page.evaluate("document.activeElement?.textContent ?? ''");
  for (let i = 0; i < 10 && (await focused()) !== button; i++) await page.keyboard.press("Tab");
  expect(await focused()).toBe(button);
  await page.keyboard.press("Enter");
}

/** The link's outcome page the issuer sends the payer back to. */
async function outcome(page: Page, heading: string) {
  await page.waitForURL(/\/pay\/plink_[0-9A-Za-z]{24}\/return\?tx_id=tx_/);
  await page.getByRole("heading", { name: heading }).waitFor();
  expect(await accessibilityProblems(page)).toEqual([]);
  const txId = new URL(page.url()).searchParams.get("tx_id") ?? "";
  return (await client.GET("/v1/charges/{id}", { params: { path: { id: txId } } })).data;
}

describe("3-D Secure on the hosted payment page in Chromium", () => {
  it("4000 0000 0000 3220, Complete: challenged, then paid", async () => {
    const { page } = await open();
    await pay(page, "4000000000003220");
    await answer(page, "Complete", "3ds-challenge-phone.png");
    const charge = await outcome(page, "Payment received");
    expect(charge).toMatchObject({ status: "captured", three_d_secure: { result: "authenticated" } });
  }, 60_000);

  it("4000 0000 0000 3220, Fail: challenged, then declined", async () => {
    const { page } = await open();
    await pay(page, "4000000000003220");
    await answer(page, "Fail");
    const charge = await outcome(page, "Payment declined");
    expect(charge).toMatchObject({ status: "declined", failure_code: "authentication_failed" });
  }, 60_000);

  it("4000 0084 0000 1629: authenticated, then declined by the issuer", async () => {
    const { page } = await open();
    await pay(page, "4000008400001629");
    await answer(page, "Complete");
    const charge = await outcome(page, "Payment declined");
    expect(charge).toMatchObject({ status: "declined", failure_code: "card_declined" });
  }, 60_000);

  for (const [card, heading, result] of [
    ["4000000000003055", "Payment received", "authenticated"],
    ["4000008400001280", "Payment declined", "processing_error"],
    ["378282246310005", "Payment received", null],
    ["4242424242424242", "Payment received", null],
  ] as const) {
    it(`${card}: no challenge, "${heading}" on the page itself`, async () => {
      const { page } = await open();
      await pay(page, card);
      await page.getByRole("heading", { name: heading }).waitFor();
      expect(page.url()).toMatch(/\/pay\/plink_[0-9A-Za-z]{24}$/);
      const receipt = (await page.locator("#result dd").first().textContent()) ?? "";
      const charge = (await client.GET("/v1/charges/{id}", { params: { path: { id: receipt } } })).data;
      expect(charge?.three_d_secure?.result ?? null).toBe(result);
    });
  }
});
