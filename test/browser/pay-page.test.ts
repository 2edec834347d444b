/**
 * The hosted payment page (docs/payment-links.md 'The hosted payment page') in a real headless Chromium: a
 * payer opens a payment link, pays with a test card and sees the result; a declined card shows its reason; a
 * mistyped number is caught before anything is sent; expired and used-up links show their pages; a pix link
 * shows its QR payload; axe-core finds no serious or critical accessibility violation; no request leaves the
 * server's origin, the CSP is never violated, and the card number is in no console message and no server log
 * line. Screenshots at desktop and phone widths are kept in test/browser/artifacts/ (not committed).
 *
 * Chromium comes from Debian (`apt-get install -y chromium`; .ci/run installs it), driven by
 * playwright-core: browser downloads are impossible on the project's machines. CHROMIUM_PATH points
 * elsewhere if needed.
 */
import { join } from "node:path";
import { Writable } from "node:stream";
import type { PaymentsClient } from "@payments/client";
import { createLogger } from "@payments/server";
import type { Browser, BrowserContext, Page } from "playwright-core";
import decodeQR from "qr/decode.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { clientFor, createMerchant, createPaymentLink, pageTokenOf } from "../e2e/fixtures.ts";
import { TestClock } from "../support/clock.ts";
import type { TestServer } from "../support/server.ts";
import {
  ARTIFACTS,
  accessibilityProblems,
  expectSameOrigin,
  horizontalOverflow,
  launch,
  startBrowserServer,
  type Watched,
  WIDTHS,
  watch,
} from "./support.ts";

const VISA = "4242424242424242";
/**
 * The text of the QR code in a PNG image (a screenshot of the page's drawing), read by npm `qr`'s
 * decoder: the PNG is turned into pixels in a blank page of the browser (no page CSP there), then decoded.
 */
async function readQrCode(context: BrowserContext, png: Buffer): Promise<string> {
  const blank = await context.newPage();
  const image = await blank.evaluate(
    async (src) => {
      const img = new Image();
      img.src = src;
      await img.decode();
      const canvas = document.createElement("canvas");
      canvas.width = img.naturalWidth;
      canvas.height = img.naturalHeight;
      const ctx = canvas.getContext("2d");
      if (!ctx) throw new Error("no 2d canvas");
      ctx.drawImage(img, 0, 0);
      const { data, width, height } = ctx.getImageData(0, 0, canvas.width, canvas.height);
      return { width, height, data: Array.from(data) };
    },
    `data:image/png;base64,${png.toString("base64")}`,
  );
  await blank.close();
  return decodeQR({ width: image.width, height: image.height, data: Uint8Array.from(image.data) });
}

const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

const clock = new TestClock();
let server: TestServer;
let client: PaymentsClient;
let browser: Browser;
const logLines: string[] = [];

beforeAll(async () => {
  const stream = new Writable({
    write(chunk, _enc, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  server = await startBrowserServer({}, { logger: createLogger("info", stream), clock });
  client = clientFor(server, server.sandboxKey);
  browser = await launch();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  // The server's own log never held a card number, whatever the payer typed.
  const log = logLines.join("");
  expect(log).toContain("/v1/payment_links/");
  for (const number of [VISA, "4000000000000002", "4242424242424241"]) expect(log).not.toContain(number);
});

interface Visit extends Watched {
  context: BrowserContext;
  page: Page;
}
const visits: Visit[] = [];

/** A fresh browser context (no shared state) at a viewport size, recording console messages and requests. */
async function open(viewport = DESKTOP): Promise<Visit> {
  const context = await browser.newContext({ viewport, locale: "en-US" });
  const page = await context.newPage();
  const visit: Visit = { context, page, ...watch(page) };
  visits.push(visit);
  return visit;
}

afterEach(async () => {
  for (const visit of visits.splice(0)) {
    // Nothing from another host, no CSP violation, no script error, no card number in the console.
    expectSameOrigin(visit, new URL(server.url).origin);
    const said = [...visit.messages, ...visit.problems];
    expect(said.filter((m) => /Content Security Policy|Refused to|^page error:/i.test(m))).toEqual([]);
    for (const message of said) expect(message).not.toMatch(/4242\s?4242\s?4242\s?4242|4000000000000002/);
    await visit.context.close();
  }
});

/** A payment link of a fresh merchant (`name`): USD 25.00 for the November coffee unless `body` says otherwise. */
async function link({ name, ...body }: Parameters<typeof createPaymentLink>[1] & { name?: string }) {
  const merchant = await createMerchant(client, name ?? "Acme Coffee Roasters");
  return createPaymentLink(client, { description: "Coffee subscription, November", ...body, merchant_id: merchant.id });
}

async function fillCard(page: Page, number: string, expiry = "12 / 31") {
  await page.getByLabel("Card number").fill(number);
  await page.getByLabel(/Expiry/).fill(expiry);
  await page.getByLabel("Security code").fill("123");
  await page.getByLabel("Name on the card").fill("Ada Lovelace");
}

describe("the hosted payment page in Chromium", () => {
  it("pays with 4242 4242 4242 4242: success with a receipt reference, and the charge, balance and event in the API", async () => {
    const paymentLink = await link({
      after_completion: { type: "message", message: "Thank you! Your beans ship on Monday." },
    });
    const { page } = await open(DESKTOP);
    const response = await page.goto(paymentLink.url);
    expect(response?.status()).toBe(200);
    expect(response?.headers()["content-security-policy"]).toContain("default-src 'none'");
    await expect(page.title()).resolves.toBe("Pay Acme Coffee Roasters: $25.00");
    await page.getByText("Acme Coffee Roasters").first().waitFor();
    expect(await page.locator("#amount").textContent()).toBe("$25.00");
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Coffee subscription, November");
    await expect(page.getByText("Test mode").isVisible()).resolves.toBe(true);
    expect(await accessibilityProblems(page)).toEqual([]);

    // The number groups itself as it is typed.
    await page.getByLabel("Card number").pressSequentially(VISA);
    expect(await page.getByLabel("Card number").inputValue()).toBe("4242 4242 4242 4242");
    await page.getByLabel(/Expiry/).fill("12 / 31");
    await page.getByLabel("Security code").fill("123");
    await page.getByLabel("Name on the card").fill("Ada Lovelace");
    await page.getByLabel(/E-mail for the receipt/).fill("ada@example.com");
    await page.screenshot({ path: join(ARTIFACTS, "pay-form-desktop.png"), fullPage: true });
    await page.getByRole("button", { name: "Pay $25.00" }).click();

    await page.getByRole("heading", { name: "Payment received" }).waitFor();
    const result = page.locator("#result");
    // The result takes the focus, so a screen reader reads it at once.
    expect(await page.evaluate("document.activeElement?.id")).toBe("result");
    await expect(result.getByText("You paid $25.00 to Acme Coffee Roasters.").isVisible()).resolves.toBe(true);
    await expect(result.getByText("Visa ending in 4242").isVisible()).resolves.toBe(true);
    await expect(result.getByText("Thank you! Your beans ship on Monday.").isVisible()).resolves.toBe(true);
    const receipt = (await result.locator("dd").first().textContent()) ?? "";
    expect(receipt).toMatch(/^tx_[0-9A-Za-z]{24}$/);
    // The card fields are emptied once answered.
    expect(await page.getByLabel("Card number").inputValue()).toBe("");
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, "pay-success-desktop.png"), fullPage: true });

    const charge = await client.GET("/v1/charges/{id}", { params: { path: { id: receipt } } });
    expect(charge.data).toMatchObject({
      status: "captured",
      amount: 2500,
      currency: "USD",
      merchant_id: paymentLink.merchant_id,
      payment_link_id: paymentLink.id,
      payment_method: { brand: "visa", last4: "4242" },
      customer: { email: "ada@example.com" },
    });
    const balance = await client.GET("/v1/merchants/{id}/balance", {
      params: { path: { id: paymentLink.merchant_id } },
    });
    expect(balance.data?.balances).toEqual([{ currency: "USD", available: 2500, pending: 0 }]);
    const events = await client.GET("/v1/events", {
      params: { query: { type: "payment_link.completed", limit: 100 } },
    });
    expect(events.data?.data.find((e) => "tx_id" in e && e.tx_id === receipt)).toMatchObject({
      payment_link_id: paymentLink.id,
      uses: 1,
    });
  });

  it("works on a phone-sized screen, with the keyboard alone", async () => {
    const paymentLink = await link({ amount: 1990, description: "Two flat whites" });
    const { page } = await open(PHONE);
    await page.goto(paymentLink.url);
    // Everything fits the width: nothing scrolls sideways.
    const overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth");
    expect(overflow).toBeLessThanOrEqual(0);
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, "pay-form-phone.png"), fullPage: true });

    // Tab into the form and type, as a keyboard user would; Enter submits.
    const focused = async () => page.evaluate("document.activeElement?.id ?? ''");
    for (let i = 0; i < 10 && (await focused()) !== "card-number"; i++) await page.keyboard.press("Tab");
    expect(await focused()).toBe("card-number");
    await page.keyboard.type(VISA);
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("card-expiry");
    // The expiry takes its MM / YY shape while it is typed.
    await page.keyboard.type("12");
    expect(await page.getByLabel(/Expiry/).inputValue()).toBe("12 / ");
    await page.keyboard.type("31");
    expect(await page.getByLabel(/Expiry/).inputValue()).toBe("12 / 31");
    await page.keyboard.press("Tab");
    await page.keyboard.type("123");
    await page.keyboard.press("Tab");
    await page.keyboard.type("Grace Hopper");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Payment received" }).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, "pay-success-phone.png"), fullPage: true });
  });

  it("shows a declined card's reason, and lets the payer try another card", async () => {
    const paymentLink = await link({ max_uses: 1 });
    const { page } = await open(PHONE);
    await page.goto(paymentLink.url);
    await fillCard(page, "4000 0000 0000 0002");
    await page.getByRole("button", { name: "Pay $25.00" }).click();
    await page.getByRole("heading", { name: "Payment declined" }).waitFor();
    await expect(page.getByText("The card was declined.").isVisible()).resolves.toBe(true);
    // The link takes cards only: another card is what is offered, not another payment method.
    const result = (await page.locator("#result").textContent()) ?? "";
    expect(result).toContain("Nothing was charged. You can try another card.");
    expect(result).not.toMatch(/payment method|another way/);
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, "pay-declined-phone.png"), fullPage: true });

    await page.getByRole("button", { name: "Try another card" }).click();
    expect(await page.evaluate("document.activeElement?.id")).toBe("card-number");
    // The declined number was cleared; the link's one use is still free.
    expect(await page.getByLabel("Card number").inputValue()).toBe("");
    await fillCard(page, "5555 5555 5555 4444");
    await page.getByRole("button", { name: "Pay $25.00" }).click();
    await page.getByRole("heading", { name: "Payment received" }).waitFor();
    await expect(page.getByText("Mastercard ending in 4444").isVisible()).resolves.toBe(true);
  });

  it("offers another way to pay after a decline only on a link that takes one", async () => {
    const paymentLink = await link({ currency: "BRL", payment_methods: ["card", "pix"] });
    const { page } = await open(DESKTOP);
    await page.goto(paymentLink.url);
    await fillCard(page, "4000 0000 0000 0002");
    await page.getByRole("button", { name: /^Pay / }).click();
    await page.getByRole("heading", { name: "Payment declined" }).waitFor();
    expect(await page.locator("#result").textContent()).toContain("You can try another card, or pay another way.");
  });

  it("fits 390, 1024 and 1280 px wide: the form, a decline, a payment and a pix code, nothing pushed off-screen", async () => {
    const paymentLink = await link({
      name: "Acme Coffee Roasters & Bakery International Trading Company Ltd",
      amount: 123_456,
      description: "Annual subscription to the roastery's coffee club, with free delivery anywhere in the country",
      max_uses: 2,
    });
    const { page } = await open(DESKTOP);
    const found: string[] = [];
    const check = async (what: string) => {
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        for (const problem of await horizontalOverflow(page)) found.push(`${what} at ${width} px: ${problem}`);
      }
    };
    await page.goto(paymentLink.url);
    await check("the form");
    await fillCard(page, "4000 0000 0000 0002");
    await page.getByRole("button", { name: /^Pay / }).click();
    await page.getByRole("heading", { name: "Payment declined" }).waitFor();
    await check("the decline");
    await page.getByRole("button", { name: "Try another card" }).click();
    await fillCard(page, VISA);
    await page.getByRole("button", { name: /^Pay / }).click();
    await page.getByRole("heading", { name: "Payment received" }).waitFor();
    await check("the payment");
    const pixLink = await link({
      name: "Escola de Música Luz do Sol e Companhia Limitada",
      amount: 15_000,
      currency: "BRL",
      description: "Aulas de violão",
    });
    await page.goto(pixLink.url);
    await page.getByRole("radio", { name: "Pix" }).check();
    await check("the pix choice");
    await page.getByRole("button", { name: "Get the pix code" }).click();
    await page.getByRole("heading", { name: "Pay with pix" }).waitFor();
    await check("the pix code");
    expect(found).toEqual([]);
  });

  it("catches a mistyped number and a past expiry before sending anything", async () => {
    const paymentLink = await link({});
    const { page, requests } = await open(DESKTOP);
    await page.goto(paymentLink.url);
    await fillCard(page, "4242 4242 4242 4241", "01 / 20");
    await page.getByRole("button", { name: "Pay $25.00" }).click();

    const number = page.getByLabel("Card number");
    await page.getByText("This card number is not valid. Check it for a typo.").waitFor();
    expect(await number.getAttribute("aria-invalid")).toBe("true");
    // The message is tied to its field, and the field has the focus.
    expect(await number.getAttribute("aria-describedby")).toBe("card-number-error");
    expect(await page.evaluate("document.activeElement?.id")).toBe("card-number");
    await expect(page.getByText("This card has expired.").isVisible()).resolves.toBe(true);
    expect(requests.filter((url) => url.includes("/pay") && url.includes("/v1/"))).toEqual([]);
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, "pay-invalid-desktop.png"), fullPage: true });

    // Fixed, the message goes away as the payer types.
    await number.fill("4242 4242 4242 4242");
    await expect(page.getByText("This card number is not valid. Check it for a typo.").isVisible()).resolves.toBe(
      false,
    );
    const charges = await client.GET("/v1/charges", { params: { query: { payment_link_id: paymentLink.id } } });
    expect(charges.data?.data).toEqual([]);
  });

  it("shows a clear page for an expired link and for a used-up one", async () => {
    const expiring = await link({
      description: "Workshop ticket",
      expires_at: new Date(clock.ms + 1000).toISOString(),
    });
    clock.advance(1000);
    const { page } = await open(PHONE);
    const expired = await page.goto(expiring.url);
    expect(expired?.status()).toBe(410);
    await page.getByRole("heading", { name: "This payment link has expired" }).waitFor();
    await expect(page.getByText("Ask Acme Coffee Roasters for a new link").isVisible()).resolves.toBe(true);
    expect(await page.locator("form").count()).toBe(0);
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, "notice-expired-phone.png"), fullPage: true });

    const once = await link({ max_uses: 1, description: "Invoice #77" });
    const pageToken = await pageTokenOf(server, once.id);
    const paid = await client.POST("/v1/payment_links/{id}/pay", {
      params: { path: { id: once.id } },
      body: {
        page_token: pageToken,
        payment_method: { type: "card", number: VISA, exp_month: 12, exp_year: 2031, cvc: "123", holder: "A" },
      },
    });
    expect(paid.data?.status).toBe("captured");
    const usedUp = await page.goto(once.url);
    expect(usedUp?.status()).toBe(410);
    await page.getByRole("heading", { name: "This payment link has already been used" }).waitFor();
    expect(await accessibilityProblems(page)).toEqual([]);

    const unknown = await page.goto(`${server.url}/pay/plink_000000000000000000000000`);
    expect(unknown?.status()).toBe(404);
    await page.getByRole("heading", { name: "Payment link not found" }).waitFor();
  });

  it("has an accessibility check that does find problems (so its silence above means something)", async () => {
    const { page } = await open(DESKTOP);
    await page.setContent('<main><input type="text"><img src="data:,"><button></button></main>');
    const problems = await accessibilityProblems(page);
    expect(problems.some((p) => p.includes("label"))).toBe(true);
    expect(problems.some((p) => p.includes("button-name"))).toBe(true);
  });

  it("a pix link shows its QR code, which reads back as its payload, and the payload to copy", async () => {
    const pixLink = await link({ amount: 15_000, currency: "BRL", description: "Aula de violão", name: "Escola Luz" });
    const { context, page } = await open(PHONE);
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(server.url).origin });
    await page.goto(pixLink.url);
    expect(await page.locator("#amount").textContent()).toMatch(/^R\$\s?150\.00$/);
    // Card is offered first; the payer picks pix.
    await page.getByRole("radio", { name: "Pix" }).check();
    await expect(page.getByLabel("Card number").isVisible()).resolves.toBe(false);
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.getByRole("button", { name: "Get the pix code" }).click();
    await page.getByRole("heading", { name: "Pay with pix" }).waitFor();
    const payload = await page.getByLabel("Pix code (copy and paste)").inputValue();
    expect(payload).toMatch(/^000201.*br\.gov\.bcb\.pix/);
    // The QR code as the payer's camera sees it: the drawn image, read back by a QR decoder.
    const qr = page.getByRole("img", { name: /^Pix QR code for R\$\s?150\.00 to Escola Luz$/ });
    expect(await readQrCode(context, await qr.screenshot())).toBe(payload);
    // The footer speaks of pix, not of card details.
    const footer = page.locator("footer");
    expect(await footer.innerText()).toMatch(/pix code this page shows; it never asks for your card or bank details/);
    expect(await footer.innerText()).not.toMatch(/card details go/);
    await page.getByRole("button", { name: "Copy the pix code" }).click();
    await page.getByRole("button", { name: "Copied" }).waitFor();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(payload);
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, "pay-pix-phone.png"), fullPage: true });

    const charges = await client.GET("/v1/charges", { params: { query: { payment_link_id: pixLink.id } } });
    expect(charges.data?.data).toMatchObject([{ status: "pending", payment_method: { type: "pix" } }]);
    const held = await client.GET("/v1/payment_links/{id}", { params: { path: { id: pixLink.id } } });
    expect(held.data).toMatchObject({ uses: 0, pending_uses: 1 });
  }, 90_000); // the QR code is read back from a screenshot: slow on a busy two-core machine
});
