import { unwrap } from "@payments/client";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientFor } from "../../e2e/fixtures.ts";
import type { TestServer } from "../../support/server.ts";
import { checkPage, expectAccessible, launch, openConsole, POLL, signIn, startBrowserServer } from "../support.ts";

// A sandbox webhook endpoint's chaos settings on its console page (WebhookChaos;
// docs/testing-your-integration.md "Webhook chaos"): shown in its details, set in a dialog (accessible,
// reachable by Tab), saved through PATCH, turned off; a production endpoint's page offers none.

describe("console: webhook chaos", { timeout: 120_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    server = await startBrowserServer();
    browser = await launch();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  /** The value of a term of the endpoint's details list. */
  const detail = (term: string) =>
    page
      .locator("main dl.details dt")
      .filter({ hasText: new RegExp(`^${term.replace(/[()]/g, "\\$&")}$`) })
      .locator("xpath=following-sibling::dd[1]")
      .textContent();

  it("sets, shows and turns off a sandbox endpoint's chaos settings", async () => {
    const client = clientFor(server, server.sandboxKey);
    const endpoint = unwrap(
      await client.POST("/v1/webhook_endpoints", {
        body: { url: "http://127.0.0.1:9/chaos", enabled_events: ["webhook_endpoint.test"] },
      }),
    );
    await signIn(page, server.url, server.sandboxKey);
    await openConsole(page, server.url, `webhooks/${endpoint.id}`, "http://127.0.0.1:9/chaos");
    expect(await detail("Chaos (sandbox)")).toBe("none");

    await page.getByRole("button", { name: "Chaos settings" }).click();
    const dialog = page.getByRole("dialog", { name: "Webhook chaos (sandbox)" });
    await dialog.getByLabel("Send each acknowledged delivery twice").check();
    await dialog.getByLabel("Delay the first attempt (seconds, sandbox clock)").fill("30");
    await dialog.getByLabel("Fail the first attempts unsent").fill("2");
    await expectAccessible(page, "the webhook chaos dialog");
    await dialog.getByRole("button", { name: "Save" }).click();
    await expect
      .poll(() => detail("Chaos (sandbox)"), POLL)
      .toBe("each acknowledged delivery sent twice; first attempt delayed 30 s; first 2 attempt(s) fail unsent");
    const saved = unwrap(await client.GET("/v1/webhook_endpoints/{id}", { params: { path: { id: endpoint.id } } }));
    expect(saved.chaos).toEqual({ duplicate: true, reorder: false, delay_seconds: 30, fail_first_attempts: 2 });
    await checkPage(page, "a webhook endpoint with chaos settings");

    // The dialog opens with the saved settings, and turns them off.
    await page.getByRole("button", { name: "Chaos settings" }).click();
    expect(await dialog.getByLabel("Send each acknowledged delivery twice").isChecked()).toBe(true);
    expect(await dialog.getByLabel("Delay the first attempt (seconds, sandbox clock)").inputValue()).toBe("30");
    await dialog.getByRole("button", { name: "Turn off" }).click();
    await expect.poll(() => detail("Chaos (sandbox)"), POLL).toBe("none");
    const off = unwrap(await client.GET("/v1/webhook_endpoints/{id}", { params: { path: { id: endpoint.id } } }));
    expect(off.chaos).toBeNull();

    // A refusal of "Turn off" stays in the dialog, as one of Save does: the endpoint is deleted meanwhile.
    unwrap(
      await client.PATCH("/v1/webhook_endpoints/{id}", {
        params: { path: { id: endpoint.id } },
        body: { chaos: { duplicate: false, reorder: true, delay_seconds: 0, fail_first_attempts: 0 } },
      }),
    );
    await page.reload();
    await page.getByRole("button", { name: "Chaos settings" }).click();
    expect(await dialog.getByLabel("Send the events of one request newest first").isChecked()).toBe(true);
    unwrap(await client.DELETE("/v1/webhook_endpoints/{id}", { params: { path: { id: endpoint.id } } }));
    await dialog.getByRole("button", { name: "Turn off" }).click();
    await expect
      .poll(() => dialog.getByRole("alert").textContent(), POLL)
      .toContain(`No webhook endpoint ${endpoint.id} in this environment.`);
    await expectAccessible(page, "the webhook chaos dialog with a refusal");
  });

  it("offers no chaos on a production endpoint's page", async () => {
    const liveKey = await server.key(["*"], { live: true });
    const live = clientFor(server, liveKey);
    const endpoint = unwrap(
      await live.POST("/v1/webhook_endpoints", {
        body: { url: "https://hooks.example.com/live-chaos", enabled_events: ["webhook_endpoint.test"] },
      }),
    );
    // A browser of its own: the sandbox sign-in of the test before stays where it is.
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    await signIn(page, server.url, liveKey);
    await openConsole(page, server.url, `webhooks/${endpoint.id}`, "https://hooks.example.com/live-chaos");
    await page.getByRole("button", { name: "Rotate secret" }).waitFor();
    expect(await page.getByRole("button", { name: "Chaos settings" }).count()).toBe(0);
    expect(await page.locator("main dl.details dt").filter({ hasText: "Chaos" }).count()).toBe(0);
  });
});
