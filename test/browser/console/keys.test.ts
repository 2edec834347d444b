import type { BrowserContext, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { clientFor, createServiceKey, keyIdOf, storedConsoleSessionsOf } from "../../e2e/fixtures.ts";
import type { TestServer } from "../../support/server.ts";
import {
  browserSuite,
  expectAccessible,
  expectNothingSecretStored,
  expectSameOrigin,
  POLL,
  screenshots,
  signIn,
  storage,
  type Watched,
} from "../support.ts";

// The keys page shows what ServiceKey holds for each key (name, a truncated prefix starting `key_`, scopes,
// how long ago each key was last used, a rotate action), and the life of a key in the console: created with
// its secret shown once, used (its "last used" changes), rotated (the old secret keeps working for the grace
// period), revoked (refused at once); signing in and out; and what the browser keeps meanwhile.

const SECRET = /key_test_[0-9A-Za-z]{32}/;

describe("console: sign-in and service keys", { timeout: 120_000 }, () => {
  let server: TestServer;
  let context: BrowserContext;
  let page: Page;
  let watched: Watched;
  const secretsSeen: string[] = [];

  /** A request made with a key, outside the browser: what an integration does. */
  const apiStatus = async (key: string, path = "/v1/merchants") =>
    (await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } })).status;

  browserSuite(async (suite) => {
    ({ server, context, page, watched } = suite);
    secretsSeen.push(server.sandboxKey);
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
  });

  /** The keys table's row for a key name. */
  const row = (name: string) =>
    page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: new RegExp(`^${name}`) }) });

  /** Loads the keys page afresh (a reload: the same address again would not fetch anything). */
  async function showKeys(): Promise<void> {
    if (page.url() === `${server.url}/console#/keys`) await page.reload();
    else await page.goto(`${server.url}/console#/keys`);
    await page.getByRole("table", { name: "Service keys" }).waitFor();
  }

  it("shows the sign-in page, accessible, with the key field and nothing stored", async () => {
    await page.goto(`${server.url}/console`);
    await page.getByLabel("Service key", { exact: true }).waitFor();
    await expectAccessible(page, "the sign-in page");
    await screenshots(page, "console-sign-in");
    const before = await storage(context, page);
    expect(before.cookies).toEqual([]);
    expect(before.localStorage).toEqual({});
    expect(before.sessionStorage).toEqual({});
  });

  it("refuses a wrong key with a sentence a person understands, keeping the key in its field to correct", async () => {
    const wrong = `key_test_${"x".repeat(32)}`;
    const field = page.getByLabel("Service key", { exact: true });
    await field.fill(wrong);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect
      .poll(() => page.getByRole("alert").textContent(), POLL)
      .toBe(
        "That key was not accepted. Check that you pasted the whole secret (it starts with key_test_ or key_live_) and that the key has not been revoked, rotated out or expired.",
      );
    // No API jargon, and the field keeps what was typed, marked and described by the message.
    expect(await page.getByRole("alert").textContent()).not.toMatch(/Authorization|Bearer/);
    expect(await field.inputValue()).toBe(wrong);
    expect(await field.getAttribute("aria-invalid")).toBe("true");
    expect(await field.getAttribute("aria-describedby")).toContain("signin-error");
    await expectAccessible(page, "the sign-in page with a refused key");
    expect((await storage(context, page)).cookies).toEqual([]);
  });

  it("signs in with the first start's key and shows the keys page: name, truncated prefix, scopes, last use, created, expires, rotate", async () => {
    await signIn(page, server.url, server.sandboxKey);
    await page.getByRole("table", { name: "Service keys" }).waitFor();
    const bootstrap = row("sandbox \\(created on first start\\)");
    const cells = await bootstrap.getByRole("cell").allTextContents();
    const prefix = server.sandboxKey.slice(0, 13);
    expect(cells[0]).toBe(`${prefix}…`);
    expect(cells[0]).toMatch(/^key_test_[0-9A-Za-z]{4}…$/);
    expect(cells[1]).toBe("*");
    // Signing in used the key: it was last used just now, with the exact time on hover.
    expect(cells[2]).toMatch(/just now|second|minute/);
    const lastUsed = bootstrap.getByRole("cell").nth(2).locator("time");
    expect(await lastUsed.getAttribute("title")).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(cells[4]).toBe("never");
    await expect.poll(() => bootstrap.getByRole("button", { name: /^Rotate/ }).count(), POLL).toBe(1);
    expect(await page.content()).not.toContain(server.sandboxKey);
    await screenshots(page, "console-keys");
    await expectAccessible(page, "the keys page");
  });

  it("keeps only an HttpOnly, SameSite=Strict session cookie: no key, card number or token the page can read", async () => {
    const snapshot = await storage(context, page);
    expect(snapshot.cookies).toHaveLength(1);
    expect(snapshot.cookies[0]).toMatchObject({ name: "payments_console", httpOnly: true, sameSite: "Strict" });
    expect(snapshot.documentCookie).toBe("");
    expect(snapshot.localStorage).toEqual({});
    expect(snapshot.sessionStorage).toEqual({});
    expectNothingSecretStored(snapshot, secretsSeen);
  });

  let created = "";
  let createdName = "";

  it("creates a key and shows its secret once, with a copy button and a warning", async () => {
    createdName = "checkout backend";
    await page.getByRole("button", { name: "Create key" }).click();
    const dialog = page.getByRole("dialog", { name: "Create a service key" });
    await dialog.getByLabel("Name").fill(createdName);
    await dialog.getByLabel("merchants").check();
    await dialog.getByLabel("tokenization").check();
    await expectAccessible(page, "the create-key dialog");
    await dialog.getByRole("button", { name: "Create key" }).click();

    const secretDialog = page.getByRole("dialog", { name: /created/ });
    await secretDialog.waitFor();
    expect(await secretDialog.textContent()).toMatch(/will not be shown again/);
    created = (await secretDialog.locator("code.secret").textContent()) ?? "";
    expect(created).toMatch(SECRET);
    secretsSeen.push(created);
    await screenshots(page, "console-key-secret", false);
    await expectAccessible(page, "the secret dialog");
    await secretDialog.getByRole("button", { name: "Copy secret" }).click();
    await expect.poll(() => secretDialog.getByRole("status").textContent(), POLL).toMatch(/Copied/);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(created);
    await secretDialog.getByRole("button", { name: "I have stored it" }).click();

    // Once dismissed, the secret is nowhere on the page: the list shows the prefix only.
    await row(createdName).waitFor();
    expect(await page.content()).not.toContain(created);
    const cells = await row(createdName).getByRole("cell").allTextContents();
    expect(cells[0]).toBe(`${created.slice(0, 13)}…`);
    expect(cells[1]).toBe("merchantstokenization");
    expect(cells[2]).toBe("never");
    expect(await apiStatus(created)).toBe(200);
    expectNothingSecretStored(await storage(context, page), secretsSeen);
  });

  it("shows the new key's last use change once it makes a request", async () => {
    // The request above (apiStatus) used the key; last_used_at is written just after it answers.
    await expect
      .poll(
        async () => {
          await showKeys();
          return (await row(createdName).getByRole("cell").nth(2).textContent()) ?? "";
        },
        { timeout: 20_000, interval: 300 },
      )
      .toMatch(/just now|second/);
  });

  let rotated = "";

  it("rotates the key with a chosen grace period: the new secret is shown once, the old one keeps working", async () => {
    await row(createdName)
      .getByRole("button", { name: `Rotate ${createdName}` })
      .click();
    const dialog = page.getByRole("dialog", { name: `Rotate "${createdName}"` });
    await dialog.getByLabel("Grace period for the old secret").selectOption({ label: "1 hour" });
    await expectAccessible(page, "the rotate dialog");
    await dialog.getByRole("button", { name: "Rotate key" }).click();
    const secretDialog = page.getByRole("dialog", { name: /rotated/ });
    rotated = (await secretDialog.locator("code.secret").textContent()) ?? "";
    expect(rotated).toMatch(SECRET);
    expect(rotated).not.toBe(created);
    secretsSeen.push(rotated);
    expect(await secretDialog.textContent()).toMatch(/old secret keeps working for 1 hour/);
    await secretDialog.getByRole("button", { name: "I have stored it" }).click();
    await expect
      .poll(() => row(createdName).getByRole("cell").first().textContent(), POLL)
      .toBe(`${rotated.slice(0, 13)}…`);

    expect(await apiStatus(rotated)).toBe(200);
    expect(await apiStatus(created)).toBe(200); // still within its grace period
  });

  it("revokes the key after a confirmation: both secrets are refused at once", async () => {
    await row(createdName)
      .getByRole("button", { name: `Revoke ${createdName}` })
      .click();
    const confirm = page.getByRole("dialog", { name: `Revoke "${createdName}"?` });
    await expectAccessible(page, "the revoke confirmation");
    // Cancelling changes nothing.
    await confirm.getByRole("button", { name: "Cancel" }).click();
    expect(await apiStatus(rotated)).toBe(200);
    await row(createdName)
      .getByRole("button", { name: `Revoke ${createdName}` })
      .click();
    await page
      .getByRole("dialog", { name: `Revoke "${createdName}"?` })
      .getByRole("button", { name: "Revoke key" })
      .click();
    await expect.poll(() => row(createdName).getByRole("cell").nth(5).textContent(), POLL).toBe("revoked");
    expect(await apiStatus(rotated)).toBe(401);
    expect(await apiStatus(created)).toBe(401);
    expect(await row(createdName).getByRole("button").count()).toBe(0);
  });

  it("creates a key with the keyboard alone", async () => {
    await showKeys();
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    // Tab to "Create key", open it, fill the form and submit, all from the keyboard.
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press("Tab");
      if ((await page.evaluate(() => document.activeElement?.textContent)) === "Create key") break;
    }
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog", { name: "Create a service key" });
    await dialog.waitFor();
    await page.keyboard.type("keyboard only"); // focus starts in the name field
    await page.keyboard.press("Tab"); // "*"
    await page.keyboard.press("Tab"); // merchants
    await page.keyboard.press("Space");
    for (let i = 0; i < 20; i++) {
      await page.keyboard.press("Tab");
      if ((await page.evaluate(() => document.activeElement?.textContent)) === "Create key") break;
    }
    await page.keyboard.press("Enter");
    const secretDialog = page.getByRole("dialog", { name: /created/ });
    await secretDialog.waitFor();
    const secret = (await secretDialog.locator("code.secret").textContent()) ?? "";
    secretsSeen.push(secret);
    expect(await apiStatus(secret)).toBe(200);
    // Escape closes the dialog, as any native dialog.
    await page.keyboard.press("Escape");
    await row("keyboard only").waitFor();
    expect(await row("keyboard only").getByRole("cell").nth(1).textContent()).toBe("merchants");
    await screenshots(page, "console-keys-several");
  });

  it("never stored a key or card number in the browser, and loaded nothing from another host", async () => {
    expectNothingSecretStored(await storage(context, page), secretsSeen);
    expectSameOrigin(watched, new URL(server.url).origin);
    // The only error the page logged is the 401 of the wrong key at sign-in.
    expect(watched.problems.filter((p) => !/status of 401/.test(p))).toEqual([]);
  });

  it("signs out: the session ends on the server and the cookie is cleared", async () => {
    const cookie = (await context.cookies())[0];
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Service key", { exact: true }).waitFor();
    expect(await context.cookies()).toEqual([]);
    // The old cookie is worthless now, even replayed by hand.
    const replay = await fetch(`${server.url}/console/session`, {
      headers: { cookie: `${cookie?.name}=${cookie?.value}` },
    });
    expect(replay.status).toBe(204); // no session
    const id = await keyIdOf(clientFor(server, server.sandboxKey), server.sandboxKey);
    expect(await storedConsoleSessionsOf(server, id)).toEqual([]);
    await page.goto(`${server.url}/console#/keys`);
    await page.getByLabel("Service key", { exact: true }).waitFor();
  });

  it("ends the session of a revoked key at its next request", async () => {
    const { id, secret } = await createServiceKey(clientFor(server, server.sandboxKey), ["*"], "soon revoked");
    secretsSeen.push(secret);
    await signIn(page, server.url, secret);
    await page.getByRole("table", { name: "Service keys" }).waitFor();
    await fetch(`${server.url}/v1/service_keys/${id}/revoke`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.sandboxKey}` },
    });
    await page.getByRole("link", { name: "Events" }).click();
    await expect.poll(() => page.getByRole("alert").textContent(), POLL).toMatch(/session has ended/);
    await page.getByLabel("Service key", { exact: true }).waitFor();
  });
});
