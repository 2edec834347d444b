import { type PaymentsClient, unwrap } from "@payments/client";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientFor, createMerchant, fundedMerchant, VISA } from "../../e2e/fixtures.ts";
import type { TestServer } from "../../support/server.ts";
import {
  checkPage,
  expectAccessible,
  expectKeyboardReachesEverything,
  expectNothingSecretStored,
  expectSameOrigin,
  launch,
  openConsole,
  POLL,
  screenshots,
  settle,
  signIn,
  startBrowserServer,
  storage,
  type Watched,
  watch,
} from "../support.ts";

// The payment links and cashouts pages of the console against a real server: a link created in the
// console, paid on its hosted page, its uses and charge shown, turned off; cashouts created in the
// console against a funded merchant (the API's 400 and 422 shown beside the field at fault), shown with
// their destination masked and the balance taken, canceled, paid and failed with the sandbox helpers;
// keys without `payment_links` or `cashouts` offered none of it; production keys offered no sandbox
// helper. axe on every page and dialog, and Tab reaching every action.

const IBAN = "DE89 3704 0044 0532 0130 00";
/** The same IBAN with a wrong check digit (the contract's `invalid_iban` example). */
const BAD_IBAN = "DE88 3704 0044 0532 0130 00";

describe("console: payment links and cashouts", { timeout: 120_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let watched: Watched;
  let api: PaymentsClient;

  beforeAll(async () => {
    server = await startBrowserServer();
    api = clientFor(server, server.sandboxKey);
    browser = await launch();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    watched = watch(page);
    await signIn(page, server.url, server.sandboxKey);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const detail = (term: string) =>
    page.locator("dl.details dt", { hasText: term }).locator("xpath=following-sibling::dd[1]");

  async function available(merchantId: string, currency: string): Promise<number> {
    const balance = unwrap(await api.GET("/v1/merchants/{id}/balance", { params: { path: { id: merchantId } } }));
    return balance.balances.find((b) => b.currency === currency)?.available ?? 0;
  }

  it("creates a payment link, shows its page address, counts a payment and lists its charge, and turns it off", async () => {
    const merchant = await createMerchant(api, "Link Roasters");
    await openConsole(page, server.url, "payment-links", "Payment links");
    await page.getByRole("button", { name: "Create payment link" }).click();
    const dialog = page.getByRole("dialog", { name: "Create a payment link" });
    await dialog.getByLabel("Merchant id").fill(merchant.id);
    await dialog.getByLabel("Amount in minor units").fill("2500");
    await expect.poll(() => dialog.getByText("USD 25.00").count(), POLL).toBe(1);
    await dialog.getByLabel("Description", { exact: true }).fill("Console coffee");
    // Pix with USD: the API's 400 names payment_methods, and the console shows it beside the methods.
    await dialog.getByLabel("Pix (BRL)").check();
    await dialog.getByLabel("Most payments it takes (optional)").fill("5");
    await dialog.getByLabel("After paying, the payer sees").selectOption("message");
    await dialog.getByLabel("Message shown after paying").fill("Thanks, see you soon!");
    await dialog.getByRole("button", { name: "Create payment link" }).click();
    const alert = dialog.getByRole("alert");
    await expect.poll(() => alert.textContent(), POLL).toContain("Payment methods (payment_methods)");
    expect(await alert.textContent()).toContain("pix takes BRL, not USD");
    expect(await dialog.locator("fieldset .field-error").textContent()).toBe("pix takes BRL, not USD");
    expect(await page.evaluate(() => document.activeElement?.getAttribute("value"))).toBe("card");
    await dialog.evaluate((el) => el.scrollTo(0, 0));
    await screenshots(page, "console-payment-link-form", false);
    await expectAccessible(page, "the payment link form with a problem");
    await expectKeyboardReachesEverything(page, "the payment link form", "dialog[open]");

    await dialog.getByLabel("Pix (BRL)").uncheck();
    await dialog.getByLabel("Card").check();
    await dialog.getByRole("button", { name: "Create payment link" }).click();
    await settle(page, "Console coffee");
    const pageLink = page.getByRole("link", { name: /\/pay\/plink_/ });
    const url = (await pageLink.getAttribute("href")) ?? "";
    expect(url).toMatch(new RegExp(`^${server.url}/pay/plink_[0-9A-Za-z]{24}$`));
    expect(await pageLink.textContent()).toBe(url);
    const id = url.split("/").pop() ?? "";
    expect(page.url()).toContain(`#/payment-links/${id}`);
    expect(await detail("Uses").textContent()).toBe("0 of 5");
    expect(await detail("Amount").textContent()).toBe("USD 25.00");
    expect(await detail("Payment methods").textContent()).toBe("card");
    expect(await detail("After paying").textContent()).toBe("Message: Thanks, see you soon!");
    expect(await page.getByText("No payment yet.").count()).toBe(1);
    // What the console created is what the API holds.
    expect(unwrap(await api.GET("/v1/payment_links/{id}", { params: { path: { id } } }))).toMatchObject({
      merchant_id: merchant.id,
      amount: 2500,
      currency: "USD",
      description: "Console coffee",
      payment_methods: ["card"],
      max_uses: 5,
      after_completion: { type: "message", message: "Thanks, see you soon!" },
      active: true,
    });

    // A payer pays on the hosted page (another tab of the same browser).
    const payer = await context.newPage();
    await payer.goto(url);
    await payer.getByLabel("Card number").fill("4242 4242 4242 4242");
    await payer.getByLabel(/Expiry/).fill("12 / 31");
    await payer.getByLabel("Security code").fill("123");
    await payer.getByLabel("Name on the card").fill("Ada Lovelace");
    await payer.getByRole("button", { name: "Pay $25.00" }).click();
    await payer.getByRole("heading", { name: "Payment received" }).waitFor();
    const receipt = (await payer.locator("#result dd").first().textContent()) ?? "";
    expect(receipt).toMatch(/^tx_/);
    await payer.close();

    await openConsole(page, server.url, `payment-links/${id}`, "Console coffee");
    expect(await detail("Uses").textContent()).toBe("1 of 5");
    const charges = page.getByRole("table", { name: "Charges through this link" });
    await charges.getByRole("link", { name: receipt }).waitFor();
    expect(await charges.getByRole("row", { name: new RegExp(receipt) }).textContent()).toContain("USD 25.00");
    await checkPage(page, "a payment link with its charges", "console-payment-link");

    // Its charge links back to the link.
    await charges.getByRole("link", { name: receipt }).click();
    await settle(page, /USD 25\.00 · captured/);
    await page.getByRole("link", { name: id }).click();
    await settle(page, "Console coffee");

    // Edit the description and the expiry.
    await page.getByRole("button", { name: "Edit description and expiry" }).click();
    const edit = page.getByRole("dialog", { name: "Edit the payment link" });
    await edit.getByLabel("Description").fill("Console coffee, December");
    await edit.getByLabel(/Expires/).fill("2031-12-31T23:59");
    await expectAccessible(page, "the edit dialog");
    await edit.getByRole("button", { name: "Save" }).click();
    await settle(page, "Console coffee, December");
    const edited = unwrap(await api.GET("/v1/payment_links/{id}", { params: { path: { id } } }));
    expect(edited.description).toBe("Console coffee, December");
    expect(Date.parse(edited.expires_at ?? "")).toBe(new Date("2031-12-31T23:59").getTime());

    // Turn it off: the API says so and the hosted page takes no payment; then on again.
    await page.getByRole("button", { name: "Turn off" }).click();
    await page.getByRole("button", { name: "Turn on" }).waitFor();
    expect(await detail("Status").textContent()).toBe("off takes no payments");
    expect(unwrap(await api.GET("/v1/payment_links/{id}", { params: { path: { id } } })).active).toBe(false);
    expect((await fetch(url)).status).toBe(410);

    // The list, filtered by the API's `active` filter.
    await openConsole(page, server.url, "payment-links", "Payment links");
    await page.getByLabel("Active").selectOption("false");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(/active=false/);
    const rows = () => page.getByRole("table", { name: "Payment links" }).getByRole("rowheader").allTextContents();
    await expect.poll(rows, POLL).toEqual(["Console coffee, December"]);
    await checkPage(page, "the payment links list", "console-payment-links");
    await openConsole(page, server.url, `payment-links/${id}`, "Console coffee, December");
    await page.getByRole("button", { name: "Turn on" }).click();
    await page.getByRole("button", { name: "Turn off" }).waitFor();
    expect(unwrap(await api.GET("/v1/payment_links/{id}", { params: { path: { id } } })).active).toBe(true);
  });

  it("creates cashouts against a funded merchant: problems beside their field, the destination masked, the balance taken", async () => {
    const funded = await fundedMerchant(api, 60_000, "EUR");
    expect(await available(funded.id, "EUR")).toBe(60_000);
    await openConsole(page, server.url, `cashouts?merchant_id=${funded.id}`, "Cashouts");
    await page.getByRole("button", { name: "Create cashout" }).click();
    const dialog = page.getByRole("dialog", { name: "Create a cashout" });
    // The list's merchant filter carries into the form, and the form shows what is available.
    expect(await dialog.getByLabel("Merchant id").inputValue()).toBe(funded.id);
    await expect.poll(() => dialog.getByText("Available: EUR 600.00.").count(), POLL).toBe(1);
    await dialog.getByLabel("Amount in minor units").fill("50000");
    expect(await dialog.getByLabel("Currency").inputValue()).toBe("EUR");
    await dialog.getByLabel("IBAN", { exact: true }).fill(BAD_IBAN);
    await dialog.getByLabel("Account holder").fill("Kaffee Haus GmbH");
    await dialog.getByRole("button", { name: "Create cashout" }).click();

    // 400: the IBAN's check digits, named and shown beside the IBAN field, which gets the focus.
    const alert = dialog.getByRole("alert");
    await expect.poll(() => alert.textContent(), POLL).toContain("IBAN (destination.iban)");
    expect(await alert.textContent()).toContain("check digits do not match");
    const iban = dialog.getByLabel("IBAN", { exact: true });
    expect(await iban.getAttribute("aria-invalid")).toBe("true");
    expect(await page.evaluate(() => document.activeElement?.getAttribute("name"))).toBe("iban");
    const noteId = ((await iban.getAttribute("aria-describedby")) ?? "").split(" ").pop() ?? "";
    expect(await page.locator(`[id="${noteId}"]`).textContent()).toContain("check digits do not match");
    await dialog.evaluate((el) => el.scrollTo(0, 0));
    await screenshots(page, "console-cashout-form", false);
    await expectAccessible(page, "the cashout form with a problem");
    await expectKeyboardReachesEverything(page, "the cashout form", "dialog[open]");

    // 422: more than the available balance, named against the amount.
    await iban.fill(IBAN);
    await dialog.getByLabel("Amount in minor units").fill("60001");
    await dialog.getByRole("button", { name: "Create cashout" }).click();
    await expect.poll(() => alert.textContent(), POLL).toContain("Amount in minor units (amount)");
    expect(await iban.getAttribute("aria-invalid")).toBeNull();
    expect(await dialog.getByLabel("Amount in minor units").getAttribute("aria-invalid")).toBe("true");
    expect(await available(funded.id, "EUR")).toBe(60_000);

    await dialog.getByLabel("Amount in minor units").fill("50000");
    await expect.poll(() => dialog.getByText("EUR 500.00", { exact: true }).count(), POLL).toBe(1);
    await dialog.getByRole("button", { name: "Create cashout" }).click();
    await settle(page, "EUR 500.00 · pending");
    const coId = page.url().split("#/cashouts/")[1] ?? "";
    expect(coId).toMatch(/^co_[0-9A-Za-z]{24}$/);
    expect(await detail("Destination").textContent()).toBe("IBAN DE89 **** **** **** **30 00");
    expect(await detail("Account holder").textContent()).toBe("Kaffee Haus GmbH");
    // Never the full account number: not on the page, not in the browser's storage.
    const content = await page.content();
    for (const full of [IBAN, IBAN.replaceAll(" ", ""), "370400440532013000"]) expect(content).not.toContain(full);
    expectNothingSecretStored(await storage(context, page), [server.sandboxKey, IBAN.replaceAll(" ", "")]);
    // The balance dropped by the amount, at once.
    expect(await available(funded.id, "EUR")).toBe(10_000);
    await checkPage(page, "a pending cashout", "console-cashout");
    await openConsole(page, server.url, `merchants/${funded.id}`, "Acme Coffee");
    await page.getByRole("table", { name: "Balance per currency" }).waitFor();
    expect(await page.getByRole("row", { name: /EUR/ }).textContent()).toContain("EUR 100.00");

    // The sandbox plays the bank: pay now.
    await page.getByRole("link", { name: "This merchant's cashouts" }).click();
    await settle(page, "Cashouts");
    await page.getByRole("link", { name: coId }).click();
    await settle(page, "EUR 500.00 · pending");
    await page.getByRole("button", { name: "Pay now (sandbox)" }).click();
    await settle(page, "EUR 500.00 · paid");
    expect(await page.getByRole("group", { name: "Cashout actions" }).getByRole("button").count()).toBe(0);
    expect(unwrap(await api.GET("/v1/cashouts/{id}", { params: { path: { id: coId } } })).status).toBe("paid");
    expect(await available(funded.id, "EUR")).toBe(10_000);
  });

  it("cancels a pending cashout after a confirmation, fails one with the sandbox helper, and filters the list", async () => {
    const funded = await fundedMerchant(api, 20_000, "EUR");
    const create = (amount: number) =>
      api.POST("/v1/cashouts", {
        body: {
          merchant_id: funded.id,
          amount,
          currency: "EUR",
          destination: { type: "iban", iban: IBAN, account_holder: "Kaffee Haus GmbH" },
        },
      });
    const toCancel = unwrap(await create(5_000));
    const toFail = unwrap(await create(7_000));
    const raced = unwrap(await create(1_000));

    // A refusal stays in the fail dialog: the cashout is canceled elsewhere while the dialog is open.
    await openConsole(page, server.url, `cashouts/${raced.id}`, "EUR 10.00 · pending");
    await page.getByRole("button", { name: "Fail now (sandbox)" }).click();
    const refused = page.getByRole("dialog", { name: "Fail the cashout (sandbox)" });
    await refused.getByLabel("Failure code").waitFor();
    unwrap(await api.POST("/v1/cashouts/{id}/cancel", { params: { path: { id: raced.id } } }));
    await refused.getByRole("button", { name: "Fail cashout" }).click();
    await expect.poll(() => refused.getByRole("alert").textContent(), POLL).toMatch(/cancel/i);
    await expectAccessible(page, "the fail dialog with a refusal");
    await refused.getByRole("button", { name: "Cancel" }).click();
    expect(unwrap(await api.GET("/v1/cashouts/{id}", { params: { path: { id: raced.id } } })).status).toBe("canceled");
    expect(await available(funded.id, "EUR")).toBe(8_000);

    await openConsole(page, server.url, `cashouts/${toCancel.id}`, "EUR 50.00 · pending");
    await page.getByRole("button", { name: "Cancel cashout" }).click();
    const confirm = page.getByRole("dialog", { name: "Cancel this cashout?" });
    expect(await confirm.textContent()).toContain("EUR 50.00 return to the merchant's available balance");
    // Dismissing the confirmation changes nothing.
    await confirm.getByRole("button", { name: "Cancel", exact: true }).click();
    expect(unwrap(await api.GET("/v1/cashouts/{id}", { params: { path: { id: toCancel.id } } })).status).toBe(
      "pending",
    );
    await page.getByRole("button", { name: "Cancel cashout" }).click();
    await page
      .getByRole("dialog", { name: "Cancel this cashout?" })
      .getByRole("button", { name: "Cancel cashout" })
      .click();
    await settle(page, "EUR 50.00 · canceled");
    expect(await page.getByRole("button", { name: "Cancel cashout" }).count()).toBe(0);
    expect(await available(funded.id, "EUR")).toBe(13_000);

    await openConsole(page, server.url, `cashouts/${toFail.id}`, "EUR 70.00 · pending");
    await page.getByRole("button", { name: "Fail now (sandbox)" }).click();
    const fail = page.getByRole("dialog", { name: "Fail the cashout (sandbox)" });
    await fail.getByLabel("Failure code").selectOption("no_account");
    await expectAccessible(page, "the fail dialog");
    await fail.getByRole("button", { name: "Fail cashout" }).click();
    await settle(page, "EUR 70.00 · failed");
    expect(await detail("Failure").textContent()).toMatch(/^no_account: /);
    expect(await available(funded.id, "EUR")).toBe(20_000);

    // The list: the API's merchant and status filters, kept in the address.
    await openConsole(page, server.url, `cashouts?merchant_id=${funded.id}`, "Cashouts");
    const ids = () => page.getByRole("table", { name: "Cashouts" }).getByRole("rowheader").allTextContents();
    await expect.poll(ids, POLL).toEqual([raced.id, toFail.id, toCancel.id]);
    expect(await page.getByRole("row", { name: new RegExp(toFail.id) }).textContent()).toContain(
      "IBAN DE89 **** **** **** **30 00",
    );
    await page.getByLabel("Status").selectOption("canceled");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(/status=canceled/);
    expect(page.url()).toContain(`merchant_id=${funded.id}`);
    await expect.poll(ids, POLL).toEqual([raced.id, toCancel.id]);
    await checkPage(page, "the cashouts list", "console-cashouts");
  });

  it("creates cashouts to a US account, a pix key and a CLABE, each with its own fields and currency", async () => {
    const usd = await fundedMerchant(api, 10_000, "USD");
    await openConsole(page, server.url, "cashouts", "Cashouts");
    await page.getByRole("button", { name: "Create cashout" }).click();
    const dialog = page.getByRole("dialog", { name: "Create a cashout" });
    await dialog.getByLabel("Merchant id").fill(usd.id);
    await dialog.getByLabel("Amount in minor units").fill("2500");
    await dialog.getByLabel("Destination").selectOption("us_bank_account");
    // The currency follows the destination's kind, and only that kind's fields are in the form.
    expect(await dialog.getByLabel("Currency").inputValue()).toBe("USD");
    expect(await dialog.getByLabel("IBAN", { exact: true }).count()).toBe(0);
    await dialog.getByLabel("Routing number (9 digits)").fill("110000000");
    await dialog.getByLabel("Account number").fill("000123456789");
    await dialog.getByLabel("Account type").selectOption("savings");
    await dialog.getByLabel("Account holder").fill("Ada Lovelace");
    await dialog.getByRole("button", { name: "Create cashout" }).click();
    await settle(page, "USD 25.00 · pending");
    expect(await detail("Destination").textContent()).toBe("US account ********6789");
    expect(await detail("Account type").textContent()).toBe("savings");
    expect(await page.content()).not.toContain("000123456789");

    // Pix and CLABE: a merchant without BRL or MXN balance gets the API's 422, named against the amount.
    await openConsole(page, server.url, "cashouts", "Cashouts");
    await page.getByRole("button", { name: "Create cashout" }).click();
    await dialog.getByLabel("Merchant id").fill(usd.id);
    await dialog.getByLabel("Amount in minor units").fill("100");
    await dialog.getByLabel("Destination").selectOption("pix");
    expect(await dialog.getByLabel("Currency").inputValue()).toBe("BRL");
    await dialog.getByLabel("Pix key", { exact: true }).fill("123.456.789-09");
    await dialog.getByRole("button", { name: "Create cashout" }).click();
    await expect.poll(() => dialog.getByRole("alert").textContent(), POLL).toContain("(amount)");
    await dialog.getByLabel("Destination").selectOption("clabe");
    expect(await dialog.getByLabel("Currency").inputValue()).toBe("MXN");
    await dialog.getByLabel("CLABE (18 digits)").fill("002010077777777779");
    await dialog.getByLabel("Account holder").fill("Ada Lovelace");
    await dialog.getByRole("button", { name: "Create cashout" }).click();
    await expect
      .poll(() => dialog.getByRole("alert").textContent(), POLL)
      .toContain("CLABE (18 digits) (destination.clabe)");
    expect(await dialog.getByLabel("CLABE (18 digits)").getAttribute("aria-invalid")).toBe("true");
    await dialog.getByRole("button", { name: "Cancel" }).click();
  });

  it("loaded nothing from another host, logged no error, and kept no key, card or account number", async () => {
    expectSameOrigin(watched, new URL(server.url).origin);
    // The browser logs each refused request; these are the six the tests provoked, in order (the payment
    // link's 400, the cashouts' 400 and 422, the failing of a canceled one's 409, then 422 and 400), and
    // nothing else went wrong.
    const refused = /^Failed to load resource: the server responded with a status of (400|409|422) /;
    expect(watched.problems.filter((p) => !refused.test(p))).toEqual([]);
    expect(watched.problems.map((p) => refused.exec(p)?.[1])).toEqual(["400", "400", "422", "409", "422", "400"]);
    expectNothingSecretStored(await storage(context, page), [server.sandboxKey, VISA, IBAN.replaceAll(" ", "")]);
  });
});

describe("console: payment link and cashout actions follow the key", { timeout: 120_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let api: PaymentsClient;

  beforeAll(async () => {
    server = await startBrowserServer();
    api = clientFor(server, server.sandboxKey);
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("offers a key without `payment_links` and `cashouts` neither page nor action, and the server refuses them", async () => {
    const funded = await fundedMerchant(api, 10_000, "EUR");
    const cashout = unwrap(
      await api.POST("/v1/cashouts", {
        body: {
          merchant_id: funded.id,
          amount: 1_000,
          currency: "EUR",
          destination: { type: "iban", iban: IBAN, account_holder: "Kaffee Haus GmbH" },
        },
      }),
    );
    const plink = unwrap(
      await api.POST("/v1/payment_links", {
        body: { merchant_id: funded.id, amount: 2500, currency: "EUR", description: "Scoped link" },
      }),
    );
    const key = await server.key(["charges", "merchants"], { name: "charges and merchants" });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await signIn(page, server.url, key);
    const nav = page.getByRole("navigation", { name: "Console" });
    // Disputes come with `charges`, balance transactions with `merchants`.
    expect(await nav.getByRole("list").getByRole("link").allTextContents()).toEqual([
      "Charges",
      "Disputes",
      "Merchants",
      "Balance transactions",
    ]);

    // By hand, at their addresses: the first page the key may see, and no action of theirs.
    for (const hash of [`cashouts/${cashout.id}`, `payment-links/${plink.id}`, "cashouts", "payment-links"]) {
      await page.goto(`${server.url}/console#/${hash}`);
      await page.getByRole("heading", { level: 1, name: "Charges" }).waitFor();
      for (const name of [
        "Create cashout",
        "Cancel cashout",
        "Pay now (sandbox)",
        "Fail now (sandbox)",
        "Create payment link",
        "Turn off",
        "Edit description and expiry",
      ]) {
        expect(await page.getByRole("button", { name }).count(), `${hash}: ${name}`).toBe(0);
      }
    }
    // The merchant's page offers no link to them either.
    await page.goto(`${server.url}/console#/merchants/${funded.id}`);
    await page.getByRole("heading", { level: 1, name: "Acme Coffee" }).waitFor();
    expect(await page.getByRole("link", { name: /cashouts|payment links/ }).count()).toBe(0);
    const statuses = await page.evaluate(
      async ({ co, pl }) => {
        const session = (await (await fetch("/console/session")).json()) as { csrf_token: string };
        const headers = { "X-CSRF-Token": session.csrf_token, "Content-Type": "application/json" };
        const calls = [
          fetch("/console/api/v1/cashouts", { headers }),
          fetch(`/console/api/v1/cashouts/${co}/cancel`, { method: "POST", headers }),
          fetch(`/console/api/v1/sandbox/cashouts/${co}/pay`, { method: "POST", headers }),
          fetch("/console/api/v1/payment_links", { headers }),
          fetch(`/console/api/v1/payment_links/${pl}`, { method: "PATCH", headers, body: '{"active":false}' }),
        ];
        return Promise.all(calls.map(async (c) => (await c).status));
      },
      { co: cashout.id, pl: plink.id },
    );
    expect(statuses).toEqual([403, 403, 403, 403, 403]);
    expect(unwrap(await api.GET("/v1/cashouts/{id}", { params: { path: { id: cashout.id } } })).status).toBe("pending");
    await context.close();
  });

  it("gives a key with only `payment_links` its page, with no cashout action and no charge list", async () => {
    const merchant = await createMerchant(api, "Links Only");
    const plink = unwrap(
      await api.POST("/v1/payment_links", {
        body: { merchant_id: merchant.id, amount: 900, currency: "USD", description: "Links-only link" },
      }),
    );
    const key = await server.key(["payment_links"], { name: "payment links only" });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await signIn(page, server.url, key);
    const nav = page.getByRole("navigation", { name: "Console" });
    expect(await nav.getByRole("list").getByRole("link").allTextContents()).toEqual(["Payment links"]);
    await page.goto(`${server.url}/console#/payment-links/${plink.id}`);
    await page.getByRole("heading", { level: 1, name: "Links-only link" }).waitFor();
    await page.getByRole("button", { name: "Turn off" }).waitFor();
    expect(await page.getByRole("heading", { name: "Charges through this link" }).count()).toBe(0);
    // Without `merchants` the merchant is shown, not linked.
    expect(await page.getByRole("link", { name: merchant.id }).count()).toBe(0);
    await page.goto(`${server.url}/console#/cashouts`);
    await page.getByRole("heading", { level: 1, name: "Payment links" }).waitFor();
    expect(await page.getByRole("button", { name: "Create cashout" }).count()).toBe(0);
    await expectAccessible(page, "the console of a payment-links key");
    await context.close();
  });

  it("offers a production key no sandbox helper on a pending cashout, only the cancel", async () => {
    const key = await server.key(["cashouts"], { live: true, name: "production cashouts" });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await signIn(page, server.url, key);
    // A pending production cashout, as the API would answer it (a production merchant's balance only
    // becomes available on settlement, which no test waits for).
    const id = "co_8Hn3Jk5Lp7Qr9St2Uv4Wx6Yz";
    const now = new Date().toISOString();
    await page.route(`**/console/api/v1/cashouts/${id}`, (route) =>
      route.fulfill({
        status: 200,
        contentType: "application/json",
        body: JSON.stringify({
          id,
          object: "cashout",
          merchant_id: "mch_4fQx9ZkT2mB7rLp1WcYd8sNa",
          amount: 50000,
          currency: "EUR",
          status: "pending",
          destination: {
            type: "iban",
            masked: "DE89 **** **** **** **30 00",
            last4: "3000",
            account_holder: "Acme",
            country: "DE",
          },
          failure_code: null,
          failure_message: null,
          description: null,
          metadata: {},
          livemode: true,
          created_at: now,
          updated_at: now,
        }),
      }),
    );
    await page.goto(`${server.url}/console#/cashouts/${id}`);
    await page.getByRole("heading", { level: 1, name: "EUR 500.00 · pending" }).waitFor();
    await page.getByRole("button", { name: "Cancel cashout" }).waitFor();
    expect(await page.getByRole("button", { name: /sandbox/ }).count()).toBe(0);
    // And the server answers the helper 404 for a production key.
    const status = await page.evaluate(async (co) => {
      const session = (await (await fetch("/console/session")).json()) as { csrf_token: string };
      const res = await fetch(`/console/api/v1/sandbox/cashouts/${co}/pay`, {
        method: "POST",
        headers: { "X-CSRF-Token": session.csrf_token },
      });
      return res.status;
    }, id);
    expect(status).toBe(404);
    await context.close();
  });
});
