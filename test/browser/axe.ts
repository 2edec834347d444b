import axe from "axe-core";
import type { Page } from "playwright-core";

// The one accessibility check of the browser suites (the hosted payment page, the console, the
// reference): axe-core's WCAG 2.1 A and AA rules and its best practices, run inside the page. axe is
// evaluated through the DevTools protocol, so the page's Content-Security-Policy stays as it is.

const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"];

/** The serious and critical violations on the page, one line each (rule, help, the elements). */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  await page.evaluate(axe.source);
  // An expression as a string: it runs in the page, whose globals (document, axe) this program does not type.
  const results = (await page.evaluate(
    `axe.run(document, { runOnly: { type: "tag", values: ${JSON.stringify(TAGS)} }, resultTypes: ["violations"] })`,
  )) as { violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[] };
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`);
}
