import { unwrap } from "@payments/client";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { clientFor, createCharge } from "../../e2e/fixtures.ts";
import type { TestServer } from "../../support/server.ts";
import {
  browserSuite,
  checkPage,
  DESKTOP,
  expectAccessible,
  expectNothingSecretStored,
  openConsole,
  POLL,
  settle,
  signIn,
  storage,
  type Watched,
} from "../support.ts";

// The console's sandboxes page (clients/console/src/console/pages/sandboxes.ts;
// docs/testing-your-integration.md "In the console"): a sandbox created from the console shows its first
// key once; opening it signs the browser in to it (the banner names it); a charge made there through the
// API shows in that session and not in the default sandbox's; deleting it ends its session and its key.

describe("console: sandboxes on demand", { timeout: 180_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  /** The browser that creates the sandbox and opens it. */
  let context: BrowserContext;
  let page: Page;
  let watched: Watched;
  /** A second browser that stays in the default sandbox. */
  let other: Page;

  browserSuite(async (suite) => {
    ({ server, browser, context, page, watched } = suite);
    other = await (await browser.newContext({ viewport: DESKTOP })).newPage();
  });

  const banner = (p: Page) => p.getByRole("note", { name: "Environment" }).textContent();
  const row = (p: Page, name: string) =>
    p.getByRole("table", { name: "Sandboxes" }).getByRole("row").filter({ hasText: name });

  let sandboxId = "";
  let sandboxKey = "";

  it("creates a sandbox and shows its key once, with a copy button and a warning", async () => {
    await signIn(page, server.url, server.sandboxKey);
    expect(await banner(page)).toContain("test data of the default sandbox");
    await openConsole(page, server.url, "sandboxes", "Sandboxes");
    await page.getByText("No sandboxes yet.").waitFor();
    await page.getByRole("button", { name: "Create sandbox" }).click();
    const form = page.getByRole("dialog", { name: "Create a sandbox" });
    await form.getByLabel("Name").fill("QA: browser");
    await expectAccessible(page, "the create-sandbox dialog");
    await form.getByRole("button", { name: "Create sandbox" }).click();

    const shown = page.getByRole("dialog", { name: "Sandbox “QA: browser” created" });
    await shown.waitFor();
    sandboxKey = (await shown.locator("#new-secret").textContent()) ?? "";
    expect(sandboxKey).toMatch(/^key_test_[0-9A-Za-z]{32}$/);
    expect(await shown.textContent()).toContain("it will not be shown again");
    await shown.getByRole("button", { name: "Copy secret" }).waitFor();
    await expectAccessible(page, "the new sandbox's key");
    const listed = unwrap(await clientFor(server, server.sandboxKey).GET("/v1/sandboxes"));
    expect(listed.data.map((s) => s.name)).toEqual(["QA: browser"]);
    sandboxId = listed.data[0]?.id ?? "";
    // The list behind the dialog has the new sandbox, and never its key.
    await row(page, "QA: browser").waitFor();
    expect(await page.getByRole("table", { name: "Sandboxes" }).textContent()).toContain(sandboxId);
    expect(await page.getByRole("table", { name: "Sandboxes" }).textContent()).not.toContain(sandboxKey);
  });

  it("opens it in a new sign-in, after a confirmation: the banner names the sandbox", async () => {
    const shown = page.getByRole("dialog", { name: "Sandbox “QA: browser” created" });
    await shown.getByRole("button", { name: "Open the sandbox" }).click();
    const confirm = page.getByRole("dialog", { name: "Open the sandbox “QA: browser”?" });
    expect(await confirm.textContent()).toContain("signs this browser out of the current session");
    // The key left the page with its dialog.
    expect(await page.locator("#new-secret").count()).toBe(0);
    await confirm.getByRole("button", { name: "Sign in to the sandbox" }).click();
    await expect.poll(() => banner(page), POLL).toContain("QA: browser");
    expect(await banner(page)).toContain(sandboxId);
    expect(await banner(page)).toContain("not the default sandbox's");
    expect(await page.title()).toContain("Sandbox QA: browser");
    // Its own colour: not the default sandbox's amber (rgb(255, 241, 194)) nor production's red.
    const colour = await page
      .getByRole("note", { name: "Environment" })
      .evaluate((el) => getComputedStyle(el).backgroundColor);
    expect(colour).toBe("rgb(223, 243, 241)");
    expect(await page.evaluate(() => document.body.className)).toBe("sandbox sandbox-on-demand");
    // Inside a sandbox, sandboxes are not managed: the page says why.
    await openConsole(page, server.url, "sandboxes", "Sandboxes");
    expect(await page.locator("#sandboxes-unavailable").textContent()).toContain("managed from the account");
    expect(await page.getByRole("button", { name: "Create sandbox" }).count()).toBe(0);
    await checkPage(page, "the sandboxes page inside a sandbox");
  });

  it("shows a charge made there through the API in that session, and not in the default sandbox's", async () => {
    const inSandbox = await createCharge(clientFor(server, sandboxKey), { amount: 4200 });
    const inDefault = await createCharge(clientFor(server, server.sandboxKey), { amount: 1300 });
    await openConsole(page, server.url, "charges", "Charges");
    await page.getByRole("link", { name: inSandbox.id }).waitFor();
    expect(await page.getByRole("link", { name: inDefault.id }).count()).toBe(0);

    await signIn(other, server.url, server.sandboxKey);
    await openConsole(other, server.url, "charges", "Charges");
    await other.getByRole("link", { name: inDefault.id }).waitFor();
    expect(await other.getByRole("link", { name: inSandbox.id }).count()).toBe(0);
    expect(await banner(other)).toContain("test data of the default sandbox");
  });

  it("deletes it after a confirmation naming what is erased; its session and key stop working", async () => {
    await openConsole(other, server.url, "sandboxes", "Sandboxes");
    await checkPage(other, "the sandboxes page");
    await row(other, "QA: browser").getByRole("button", { name: "Delete QA: browser" }).click();
    const confirm = other.getByRole("dialog", { name: "Delete the sandbox “QA: browser”?" });
    const text = (await confirm.textContent()) ?? "";
    for (const words of [sandboxId, "erases everything in it", "charges", "service keys", "cannot be undone"]) {
      expect(text).toContain(words);
    }
    await expectAccessible(other, "the delete confirmation");
    await confirm.getByRole("button", { name: "Delete sandbox" }).click();
    await other.getByText("No sandboxes yet.").waitFor();

    expect((await clientFor(server, sandboxKey).GET("/v1/charges")).response.status).toBe(401);
    // The sandbox's console session ended with it: its next request lands on the sign-in page.
    await page.getByRole("link", { name: "Merchants" }).click();
    await page.getByRole("heading", { level: 1, name: "Sign in to the console" }).waitFor();
    expect(await page.locator("#signin-error").textContent()).toContain("Your session has ended");
    // And its key no longer signs in.
    await page.getByLabel("Service key", { exact: true }).fill(sandboxKey);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.locator("#signin-error").textContent(), POLL).toContain("That key was not accepted");
  });

  it("explains the page to a key without scope `*`, which cannot manage sandboxes", async () => {
    const narrow = await server.key(["charges"], { name: "charges only" });
    const p = await (await browser.newContext()).newPage();
    await signIn(p, server.url, narrow);
    expect(await p.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Sandboxes" }).count()).toBe(
      0,
    );
    await p.goto(`${server.url}/console#/sandboxes`);
    await settle(p, "Sandboxes");
    expect(await p.locator("#sandboxes-unavailable").textContent()).toContain("scope *");
    expect(await p.locator("#sandboxes-unavailable").textContent()).toContain("this session's key has charges");
  });

  it("loaded nothing from another host, logged no error, and kept no key in the browser's storage", async () => {
    expect(watched.problems.filter((p) => !/401|Unauthorized/.test(p))).toEqual([]);
    expectNothingSecretStored(await storage(context, page), [server.sandboxKey, sandboxKey]);
  });
});
