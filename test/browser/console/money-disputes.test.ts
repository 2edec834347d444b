import { readFileSync } from "node:fs";
import { type PaymentsClient, unwrap } from "@payments/client";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientFor, createCharge, freshCardNumber, fundedMerchant } from "../../e2e/fixtures.ts";
import type { TestServer } from "../../support/server.ts";
import {
  checkPage,
  DESKTOP_WIDTHS,
  expectAccessible,
  expectNothingSecretStored,
  expectSameOrigin,
  horizontalOverflow,
  launch,
  openConsole,
  PHONE_WIDTH,
  POLL,
  screenshots,
  settle,
  signIn,
  startBrowserServer,
  storage,
  type Watched,
  watch,
} from "../support.ts";

// The console's money pages (issues 30 and 31) against a real server: balance transactions filtered by
// the API's filters (the rows are the API's), one transaction, a cashout's reconciliation and the CSV
// download (the file is what the API gives for the same filters, fetched through the session); disputes
// opened in the sandbox, their deadline read on the sandbox clock, evidence saved and submitted, won,
// and accepted (with the keyboard alone) into `lost`; the fraud settings' 3-D Secure threshold saved,
// and refused beside its field. axe, Tab reaching every control, and nothing off-screen at 1024 and
// 1280 px (a phone's 390 px with the tables scrolling in their own region) on each page.

const FEE = 1500;

describe("console: balance transactions, disputes and the 3-D Secure threshold", { timeout: 180_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let watched: Watched;
  let api: PaymentsClient;

  beforeAll(async () => {
    server = await startBrowserServer({
      DISPUTE_FEES: JSON.stringify({ USD: FEE }),
      // Two days to answer: read on the sandbox clock after a three-day advance it is "in 2 days", never "in 5 days".
      DISPUTE_EVIDENCE_SECONDS: String(2 * 86_400),
    });
    api = clientFor(server, server.sandboxKey);
    browser = await launch();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    page = await context.newPage();
    watched = watch(page);
    await signIn(page, server.url, server.sandboxKey);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const detail = (term: string) =>
    page.locator("dl.details dt", { hasText: new RegExp(`^${term}$`) }).locator("xpath=following-sibling::dd[1]");
  const rowIds = (caption: string) =>
    page.getByRole("table", { name: caption }).locator("tbody th[scope=row] a.id").allTextContents();

  /** The balance transactions the API lists for `query`, newest first (one page of at most 100). */
  async function apiTransactions(query: Record<string, string>): Promise<string[]> {
    const list = unwrap(await api.GET("/v1/balance_transactions", { params: { query: { ...query, limit: 100 } } }));
    if (typeof list === "string") throw new Error("CSV where JSON was asked for");
    return list.data.map((t) => t.id);
  }

  /** What sticks out of the page at the desktop widths and on a phone (tables may scroll in their region there). */
  async function overflowEverywhere(what: string): Promise<string[]> {
    const found: string[] = [];
    for (const width of [...DESKTOP_WIDTHS, PHONE_WIDTH]) {
      await page.setViewportSize({ width, height: 800 });
      for (const problem of await horizontalOverflow(page, "main", { scrollingTables: width === PHONE_WIDTH }))
        found.push(`${what} at ${width} px: ${problem}`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    return found;
  }

  it("lists a merchant's balance transactions with the API's filters, shows one, and reconciles a cashout", async () => {
    const funded = await fundedMerchant(api, 60_000);
    unwrap(
      await api.POST("/v1/charges/{id}/refunds", {
        params: { path: { id: funded.chargeId } },
        body: { amount: 10_000 },
      }),
    );
    const cashout = unwrap(
      await api.POST("/v1/cashouts", {
        body: {
          merchant_id: funded.id,
          amount: 20_000,
          currency: "USD",
          destination: { type: "iban", iban: "DE89 3704 0044 0532 0130 00", account_holder: "Kaffee Haus GmbH" },
        },
      }),
    );
    unwrap(await api.POST("/v1/sandbox/cashouts/{id}/pay", { params: { path: { id: cashout.id } } }));
    // Another merchant's money, which the merchant filter leaves out.
    await fundedMerchant(api, 5_000);

    const mine = await apiTransactions({ merchant_id: funded.id });
    expect(mine.length).toBeGreaterThanOrEqual(4);
    expect((await apiTransactions({})).length).toBeGreaterThan(mine.length);

    // From the merchant's page to its balance transactions: the API's rows, newest first.
    await openConsole(page, server.url, `merchants/${funded.id}`, /Acme Coffee/);
    await page.getByRole("link", { name: "This merchant's balance transactions" }).click();
    await page.waitForURL(new RegExp(`#/balance-transactions\\?merchant_id=${funded.id}$`));
    await settle(page, "Balance transactions");
    await expect.poll(() => rowIds("Balance transactions"), POLL).toEqual(mine);
    expect(await page.getByLabel("Merchant id").inputValue()).toBe(funded.id);
    await checkPage(page, "the balance transactions list", "console-balance-transactions");
    expect(await overflowEverywhere("the balance transactions list")).toEqual([]);
    // Every merchant's, each row naming its merchant, fits too.
    await openConsole(page, server.url, "balance-transactions", "Balance transactions");
    await expect.poll(async () => (await rowIds("Balance transactions")).length, POLL).toBeGreaterThan(mine.length);
    expect(await overflowEverywhere("every merchant's balance transactions")).toEqual([]);
    await openConsole(page, server.url, `balance-transactions?merchant_id=${funded.id}`, "Balance transactions");

    // The type filter, kept in the address beside the merchant's.
    await page.getByLabel("Type").selectOption("refund");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(/type=refund/);
    expect(page.url()).toContain(`merchant_id=${funded.id}`);
    const refunds = await apiTransactions({ merchant_id: funded.id, type: "refund" });
    expect(refunds).toHaveLength(1);
    await expect.poll(() => rowIds("Balance transactions"), POLL).toEqual(refunds);
    expect(await page.getByRole("row", { name: new RegExp(refunds[0] ?? "-") }).textContent()).toContain("-USD 100.00");

    // The created range, as UTC days (both included): the day of the transactions, then the day after.
    const refund = unwrap(
      await api.GET("/v1/balance_transactions/{id}", { params: { path: { id: refunds[0] ?? "" } } }),
    );
    const day = refund.created_at.slice(0, 10);
    const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    await page.getByLabel("Type").selectOption("");
    await page.getByLabel("Created from (UTC day)").fill(day);
    await page.getByLabel("Created to (UTC day, included)").fill(day);
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(new RegExp(`created_to=${day}`));
    await expect
      .poll(() => rowIds("Balance transactions"), POLL)
      .toEqual(
        await apiTransactions({
          merchant_id: funded.id,
          created_gte: `${day}T00:00:00.000Z`,
          created_lt: `${next}T00:00:00.000Z`,
        }),
      );
    await page.getByLabel("Created from (UTC day)").fill(next);
    await page.getByLabel("Created to (UTC day, included)").fill(next);
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(new RegExp(`created_from=${next}`));
    await page.getByText("No balance transactions match.").waitFor();

    // One transaction: its amounts, and its source linked to the charge.
    await openConsole(
      page,
      server.url,
      `balance-transactions?merchant_id=${funded.id}&type=refund`,
      "Balance transactions",
    );
    await page.getByRole("link", { name: refund.id }).click();
    await settle(page, "refund · -USD 100.00");
    expect(await detail("Amount").textContent()).toBe("-USD 100.00");
    expect(await detail("Net").textContent()).toBe("-USD 100.00");
    expect(await detail("Type").textContent()).toBe("refund");
    expect(await detail("Status").textContent()).toBe(refund.status);
    expect(await detail("Source").textContent()).toBe(refund.source);
    await checkPage(page, "a balance transaction", "console-balance-transaction");
    expect(await overflowEverywhere("a balance transaction")).toEqual([]);

    // A cashout's reconciliation: from its page, the transactions it paid out, their net its amount.
    const paidOut = await apiTransactions({ cashout_id: cashout.id });
    expect(paidOut.length).toBeGreaterThan(0);
    const nets = await Promise.all(
      paidOut.map(
        async (id) => unwrap(await api.GET("/v1/balance_transactions/{id}", { params: { path: { id } } })).net,
      ),
    );
    expect(nets.reduce((a, b) => a + b, 0)).toBe(cashout.amount);
    await openConsole(page, server.url, `cashouts/${cashout.id}`, "USD 200.00 · paid");
    await page.getByRole("link", { name: "The balance transactions it paid out" }).click();
    await settle(page, "Reconciliation of a cashout");
    expect(page.url()).toContain(`cashout_id=${cashout.id}`);
    await expect.poll(() => rowIds("Balance transactions"), POLL).toEqual(paidOut);
    await expectAccessible(page, "a cashout's reconciliation");
  });

  it("downloads the filtered list as CSV through the session: the rows the API gives for the same filters", async () => {
    const funded = await fundedMerchant(api, 42_000);
    unwrap(
      await api.POST("/v1/charges/{id}/refunds", {
        params: { path: { id: funded.chargeId } },
        body: { amount: 2_000 },
      }),
    );
    const expected = async (query: string) => {
      const res = await fetch(`${server.url}/v1/balance_transactions?${query}`, {
        headers: { Authorization: `Bearer ${server.sandboxKey}`, Accept: "text/csv" },
      });
      expect(res.status).toBe(200);
      return res.text();
    };
    const download = async () => {
      const [file] = await Promise.all([
        page.waitForEvent("download"),
        page.getByRole("button", { name: "Download CSV" }).click(),
      ]);
      return { name: file.suggestedFilename(), text: readFileSync((await file.path()) ?? "", "utf8") };
    };

    await openConsole(page, server.url, `balance-transactions?merchant_id=${funded.id}`, "Balance transactions");
    const before = watched.requests.length;
    const all = await download();
    const wanted = await expected(`merchant_id=${funded.id}`);
    expect(all.text).toBe(wanted);
    const lines = all.text.trimEnd().split("\r\n");
    expect(lines[0]).toBe(
      "id,type,amount,fee,net,currency,status,available_on,source,cashout_id,merchant_id,created_at",
    );
    // Every transaction of the merchant, as the list shows them (the CSV is never cut to a page).
    expect(lines.slice(1).map((l) => l.split(",")[0])).toEqual(await apiTransactions({ merchant_id: funded.id }));
    expect(all.name).toMatch(new RegExp(`^balance-transactions-${funded.id}-\\d{4}-\\d{2}-\\d{2}\\.csv$`));
    // Fetched through the session's API path: no key in any address the page asked for.
    const asked = watched.requests.slice(before);
    expect(asked.some((url) => url.includes(`/console/api/v1/balance_transactions?merchant_id=${funded.id}`))).toBe(
      true,
    );
    expect(asked.join(" ")).not.toMatch(/key_(test|live)_/);

    // With a filter, the file follows it.
    await openConsole(
      page,
      server.url,
      `balance-transactions?merchant_id=${funded.id}&type=refund`,
      "Balance transactions",
    );
    const refunds = await download();
    expect(refunds.text).toBe(await expected(`merchant_id=${funded.id}&type=refund`));
    expect(refunds.text.trimEnd().split("\r\n")).toHaveLength(2);
    expect(refunds.name).toMatch(new RegExp(`^balance-transactions-${funded.id}-refund-`));

    // A range that cannot match is said in words, and nothing is asked of the server.
    await openConsole(
      page,
      server.url,
      "balance-transactions?created_from=2026-12-02&created_to=2026-12-01",
      "Balance transactions",
    );
    await page.getByRole("button", { name: "Download CSV" }).click();
    await expect
      .poll(() => page.locator("main .error-box").first().textContent(), POLL)
      .toContain("“Created from” (2026-12-02) is after “Created to” (2026-12-01)");
  });

  it("opens a dispute in the sandbox, reads its deadline on the sandbox clock, saves and submits evidence, and wins it", async () => {
    // The sandbox clock three days ahead of the server's: the deadline reads against the sandbox's now.
    unwrap(await api.POST("/v1/sandbox/clock/advance", { body: { seconds: 3 * 86_400 } }));
    const charge = await createCharge(api, { amount: 8_000, card: freshCardNumber() });
    await openConsole(page, server.url, `charges/${charge.id}`, "USD 80.00 · captured");
    await page.getByRole("button", { name: "Open a dispute (sandbox)" }).click();
    const open = page.getByRole("dialog", { name: "Open a dispute (sandbox)" });
    await open.getByLabel("Reason").selectOption("product_not_received");
    await expectAccessible(page, "the open-a-dispute dialog");
    await open.getByRole("button", { name: "Open dispute" }).click();
    await settle(page, "USD 80.00 · needs response");
    const id = page.url().split("#/disputes/")[1] ?? "";
    expect(id).toMatch(/^dp_[0-9A-Za-z]{24}$/);
    expect(await detail("Reason").textContent()).toBe("product not received");
    expect(await detail("Amount").textContent()).toBe("USD 80.00");
    expect(await detail("Dispute fee").textContent()).toBe("USD 15.00");
    expect(await detail("Evidence due by").textContent()).toBe("in 2 days");
    expect(await detail("Evidence due by").locator("time").getAttribute("title")).toContain("sandbox time");
    // The money it took: the amount and the fee, each a balance transaction.
    const moved = page.getByRole("table", { name: "The dispute's balance transactions" });
    await expect.poll(() => moved.getByRole("row").count(), POLL).toBe(3);
    expect(await moved.textContent()).toContain("-USD 80.00");
    expect(await moved.textContent()).toContain("-USD 15.00");
    await checkPage(page, "a dispute that needs a response", "console-dispute");
    expect(await overflowEverywhere("a dispute with its evidence form")).toEqual([]);

    // A draft: saved, the dispute still needs a response, the fields keep what was saved.
    await page.getByLabel("Customer name").fill("Ada Lovelace");
    await page.getByLabel("Product description").fill("Two bags of coffee beans,\nshipped 2026-11-21.");
    await page.getByLabel("Shipping carrier").fill("UPS");
    await page.getByLabel("Shipping tracking number").fill("1Z999AA10123456784");
    await page.getByRole("button", { name: "Save draft" }).click();
    await expect
      .poll(async () => unwrap(await api.GET("/v1/disputes/{id}", { params: { path: { id } } })).evidence, POLL)
      .toMatchObject({
        customer_name: "Ada Lovelace",
        product_description: "Two bags of coffee beans,\nshipped 2026-11-21.",
        shipping_carrier: "UPS",
        shipping_tracking_number: "1Z999AA10123456784",
        refund_policy: null,
      });
    await settle(page, "USD 80.00 · needs response");
    expect(await page.getByLabel("Customer name").inputValue()).toBe("Ada Lovelace");
    expect(unwrap(await api.GET("/v1/disputes/{id}", { params: { path: { id } } })).status).toBe("needs_response");

    // A field too long for the contract: the API's 400 beside it.
    await page.getByLabel("Customer name").evaluate((el) => el.removeAttribute("maxlength"));
    await page.getByLabel("Customer name").fill("A".repeat(501));
    await page.getByRole("button", { name: "Save draft" }).click();
    const alert = page.locator("main form .error-box");
    await expect.poll(() => alert.textContent(), POLL).toContain("Customer name (evidence.customer_name)");
    expect(await page.getByLabel("Customer name").getAttribute("aria-invalid")).toBe("true");
    await expectAccessible(page, "the evidence form with a problem");
    await page.getByLabel("Customer name").fill("Ada Lovelace");

    // Submitted after a confirmation: under review, the evidence read only.
    await page.getByLabel("Refund policy").fill("Refunds within 30 days, shown at checkout.");
    await page.getByRole("button", { name: "Submit evidence" }).click();
    const confirm = page.getByRole("dialog", { name: "Submit the evidence?" });
    await expectAccessible(page, "the submit confirmation");
    await confirm.getByRole("button", { name: "Submit evidence" }).click();
    await settle(page, "USD 80.00 · under review");
    const submitted = unwrap(await api.GET("/v1/disputes/{id}", { params: { path: { id } } }));
    expect(submitted).toMatchObject({
      status: "under_review",
      evidence: { customer_name: "Ada Lovelace", refund_policy: "Refunds within 30 days, shown at checkout." },
    });
    expect(submitted.evidence_submitted_at).not.toBeNull();
    expect(await page.getByRole("button", { name: "Save draft" }).count()).toBe(0);
    expect(await detail("Refund policy").textContent()).toBe("Refunds within 30 days, shown at checkout.");
    expect(await page.getByRole("button", { name: "Accept the dispute" }).count()).toBe(0);

    // The sandbox's bank decides: won, the amount back (a third balance transaction), not the fee.
    await page.getByRole("button", { name: "Decide: won (sandbox)" }).click();
    await settle(page, "USD 80.00 · won");
    await expect.poll(() => moved.getByRole("row").count(), POLL).toBe(4);
    const won = unwrap(await api.GET("/v1/disputes/{id}", { params: { path: { id } } }));
    expect(won).toMatchObject({ status: "won", is_charge_refundable: true });
    expect(await detail("Evidence due by").textContent()).toBe("closed");
    expect(await page.getByRole("button", { name: /sandbox/ }).count()).toBe(0);
    await checkPage(page, "a won dispute");
  });

  it("accepts a dispute with the keyboard alone, after a confirmation: it is lost, and the list's filters find it", async () => {
    const charge = await createCharge(api, { amount: 3_000, card: freshCardNumber() });
    const dispute = unwrap(
      await api.POST("/v1/sandbox/charges/{id}/dispute", { params: { path: { id: charge.id } }, body: {} }),
    );
    const inquiryCharge = await createCharge(api, { amount: 1_000, card: freshCardNumber() });
    const inquiry = unwrap(
      await api.POST("/v1/sandbox/charges/{id}/dispute", {
        params: { path: { id: inquiryCharge.id } },
        body: { inquiry: true, reason: "general" },
      }),
    );

    await openConsole(page, server.url, `disputes/${dispute.id}`, "USD 30.00 · needs response");
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    const focused = () => page.evaluate(() => document.activeElement?.textContent ?? "");
    for (let i = 0; i < 60 && (await focused()) !== "Accept the dispute"; i++) await page.keyboard.press("Tab");
    expect(await focused()).toBe("Accept the dispute");
    await page.keyboard.press("Enter");
    const confirm = page.getByRole("dialog", { name: "Accept this dispute?" });
    await confirm.waitFor();
    expect(await confirm.textContent()).toContain("USD 30.00 and the dispute fee of USD 15.00 stay taken");
    // Escape changes nothing.
    await page.keyboard.press("Escape");
    await confirm.waitFor({ state: "detached" });
    expect(unwrap(await api.GET("/v1/disputes/{id}", { params: { path: { id: dispute.id } } })).status).toBe(
      "needs_response",
    );
    expect(await focused()).toBe("Accept the dispute");
    await page.keyboard.press("Enter");
    await confirm.waitFor();
    for (let i = 0; i < 5 && (await focused()) !== "Accept the dispute"; i++) await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.closest("dialog") !== null)).toBe(true);
    await page.keyboard.press("Enter");
    await settle(page, "USD 30.00 · lost");
    const lost = unwrap(await api.GET("/v1/disputes/{id}", { params: { path: { id: dispute.id } } }));
    expect(lost).toMatchObject({ status: "lost", is_charge_refundable: false, evidence_due_by: null });
    expect(lost.balance_transactions).toHaveLength(2);
    expect(await page.getByText("No evidence was given.").count()).toBe(1);

    // The list: the API's charge, merchant and status filters.
    await openConsole(page, server.url, "disputes", "Disputes");
    await expect.poll(() => rowIds("Disputes"), POLL).toContain(inquiry.id);
    await checkPage(page, "the disputes list", "console-disputes");
    expect(await overflowEverywhere("the disputes list")).toEqual([]);
    await page.getByLabel("Status").selectOption("lost");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(/status=lost/);
    const lostIds = unwrap(await api.GET("/v1/disputes", { params: { query: { status: "lost" } } })).data.map(
      (d) => d.id,
    );
    await expect.poll(() => rowIds("Disputes"), POLL).toEqual(lostIds);
    expect(lostIds).toContain(dispute.id);
    await page.getByLabel("Status").selectOption("");
    await page.getByLabel("Merchant id").fill(inquiryCharge.merchant_id);
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForURL(new RegExp(`merchant_id=${inquiryCharge.merchant_id}`));
    await expect.poll(() => rowIds("Disputes"), POLL).toEqual([inquiry.id]);
    expect(await page.getByRole("row", { name: new RegExp(inquiry.id) }).textContent()).toContain(
      "inquiry: needs response",
    );
    // From a charge to its disputes.
    await openConsole(page, server.url, `charges/${charge.id}`, "USD 30.00 · captured");
    await page.getByRole("link", { name: "This charge's disputes" }).click();
    await page.waitForURL(new RegExp(`charge_id=${charge.id}`));
    await expect.poll(() => rowIds("Disputes"), POLL).toEqual([dispute.id]);

    // An inquiry moves no money, and its sandbox actions say what they do.
    await openConsole(page, server.url, `disputes/${inquiry.id}`, "USD 10.00 · inquiry: needs response");
    expect(await page.getByText("None: an inquiry moves no money.").count()).toBe(1);
    expect(await page.getByRole("button", { name: "Escalate to a chargeback (sandbox)" }).count()).toBe(1);
  });

  it("saves the 3-D Secure threshold between the review and block thresholds, and shows a refusal beside its field", async () => {
    await openConsole(page, server.url, "fraud/settings", "Fraud settings");
    const threshold = page.getByLabel("Request 3-D Secure from score");
    expect(await threshold.inputValue()).toBe("");
    await threshold.fill("80");
    await page.getByRole("button", { name: "Save settings" }).click();
    const alert = page.locator("main form .error-box");
    await expect
      .poll(() => alert.textContent(), POLL)
      .toContain(
        "Request 3-D Secure from score (request_3ds_threshold): must be above review_threshold (65) and below block_threshold (75)",
      );
    expect(await threshold.getAttribute("aria-invalid")).toBe("true");
    expect(await page.evaluate(() => document.activeElement?.getAttribute("name"))).toBe("request_3ds_threshold");
    await expectAccessible(page, "the fraud settings with a problem");
    expect(unwrap(await api.GET("/v1/fraud/settings")).request_3ds_threshold ?? null).toBeNull();

    await threshold.fill("70");
    await page.getByRole("button", { name: "Save settings" }).click();
    await expect.poll(async () => unwrap(await api.GET("/v1/fraud/settings")).request_3ds_threshold, POLL).toBe(70);
    await settle(page, "Fraud settings");
    expect(await page.getByLabel("Request 3-D Secure from score").inputValue()).toBe("70");

    // Moving the review threshold past it is refused beside the review threshold, the field changed.
    await page.getByLabel("Review from score").fill("72");
    await page.getByRole("button", { name: "Save settings" }).click();
    await expect
      .poll(() => alert.textContent(), POLL)
      .toContain(
        "Review from score (review_threshold): must leave request_3ds_threshold (70) between the review and block thresholds",
      );
    expect(await page.getByLabel("Review from score").getAttribute("aria-invalid")).toBe("true");
    await page.getByLabel("Review from score").fill("65");

    // Empty turns it off.
    await page.getByLabel("Request 3-D Secure from score").fill("");
    await page.getByRole("button", { name: "Save settings" }).click();
    await expect
      .poll(async () => unwrap(await api.GET("/v1/fraud/settings")).request_3ds_threshold ?? null, POLL)
      .toBeNull();
    await settle(page, "Fraud settings");
    await checkPage(page, "the fraud settings", "console-fraud-settings");
    expect(await overflowEverywhere("the fraud settings")).toEqual([]);
    await screenshots(page, "console-fraud-settings");
  });

  it("loaded nothing from another host, logged no error but the refusals it provoked, and kept no key", async () => {
    expectSameOrigin(watched, server.url);
    // The browser logs each refused request; these are the three the tests provoked (the evidence's 400
    // and the fraud settings' two), and nothing else went wrong.
    const refused = /^Failed to load resource: the server responded with a status of (400|422) /;
    expect(watched.problems.filter((p) => !refused.test(p))).toEqual([]);
    expect(watched.problems.map((p) => refused.exec(p)?.[1])).toEqual(["400", "400", "400"]);
    expectNothingSecretStored(await storage(context, page), [server.sandboxKey]);
  });
});

describe("console: the money pages follow the key", { timeout: 120_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let api: PaymentsClient;

  beforeAll(async () => {
    server = await startBrowserServer({ DISPUTE_FEES: JSON.stringify({ USD: FEE }) });
    api = clientFor(server, server.sandboxKey);
    browser = await launch();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  async function signedIn(key: string): Promise<{ page: Page; close(): Promise<void> }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await signIn(page, server.url, key);
    return { page, close: () => context.close() };
  }

  it("gives a key with `charges` the disputes and their actions, and no balance transaction; one with `merchants` the reverse", async () => {
    const charge = await createCharge(api, { amount: 4_000, card: freshCardNumber() });
    const dispute = unwrap(
      await api.POST("/v1/sandbox/charges/{id}/dispute", { params: { path: { id: charge.id } }, body: {} }),
    );

    const charges = await signedIn(await server.key(["charges"], { name: "charges only" }));
    const nav = charges.page.getByRole("navigation", { name: "Console" });
    expect(await nav.getByRole("list").getByRole("link").allTextContents()).toEqual(["Charges", "Disputes"]);
    await charges.page.goto(`${server.url}/console#/disputes/${dispute.id}`);
    await settle(charges.page, "USD 40.00 · needs response");
    for (const name of ["Accept the dispute", "Decide: won (sandbox)", "Save draft", "Submit evidence"])
      expect(await charges.page.getByRole("button", { name }).count(), name).toBe(1);
    // Its balance transactions by id only: the key may not read them.
    expect(await charges.page.getByRole("table", { name: "The dispute's balance transactions" }).count()).toBe(0);
    expect(await charges.page.locator("main li code").allTextContents()).toEqual(dispute.balance_transactions);
    // No CSV or balance transaction link anywhere, and the page at its address falls back.
    await charges.page.goto(`${server.url}/console#/charges/${charge.id}`);
    await settle(charges.page, "USD 40.00 · captured");
    expect(await charges.page.getByRole("link", { name: "Its balance transactions" }).count()).toBe(0);
    expect(await charges.page.getByRole("link", { name: "This charge's disputes" }).count()).toBe(1);
    await charges.close();

    const merchants = await signedIn(await server.key(["merchants"], { name: "merchants only" }));
    const links = await merchants.page
      .getByRole("navigation", { name: "Console" })
      .getByRole("list")
      .getByRole("link")
      .allTextContents();
    expect(links).toContain("Balance transactions");
    expect(links).not.toContain("Disputes");
    await openConsole(
      merchants.page,
      server.url,
      `balance-transactions?merchant_id=${charge.merchant_id}&type=dispute`,
      "Balance transactions",
    );
    // The dispute's transaction, its source shown as an id (the key may not open disputes).
    const row = merchants.page.getByRole("table", { name: "Balance transactions" }).getByRole("row").nth(1);
    expect(await row.textContent()).toContain("-USD 40.00");
    expect(await row.textContent()).toContain(dispute.id);
    expect(await row.getByRole("link", { name: dispute.id }).count()).toBe(0);
    await merchants.close();
  });

  it("offers a production key no sandbox helper on a dispute or a charge, only accepting and the evidence", async () => {
    const key = await server.key(["*"], { live: true, name: "production" });
    const live = clientFor(server, key);
    const charge = await createCharge(live, { amount: 6_000, card: freshCardNumber() });
    // In production only the acquirer opens disputes (the sandbox helper answers 404): opened through the domain.
    const { id } = await server.running.domain.disputes.open(null, true, charge.id, {});
    const { page, close } = await signedIn(key);
    await page.goto(`${server.url}/console#/disputes/${id}`);
    await settle(page, "USD 60.00 · needs response");
    expect(await page.getByRole("button", { name: "Accept the dispute" }).count()).toBe(1);
    expect(await page.getByRole("button", { name: "Submit evidence" }).count()).toBe(1);
    expect(await page.getByRole("button", { name: /sandbox/ }).count()).toBe(0);
    await page.goto(`${server.url}/console#/charges/${charge.id}`);
    await settle(page, /USD 60\.00 · /);
    expect(await page.getByRole("button", { name: /sandbox/ }).count()).toBe(0);
    await close();
  });
});
