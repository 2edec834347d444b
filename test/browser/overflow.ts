import type { Page } from "playwright-core";

// The one horizontal-overflow check of the browser suites (the console's pages, the hosted payment page):
// at the widths people use, nothing in a page's main content is pushed off-screen or needs scrolling
// sideways (docs/console.md "Console and API reference").

/** Desktop widths every page must fit: a small laptop and a common desktop window. */
export const DESKTOP_WIDTHS = [1024, 1280] as const;

/**
 * What sticks out sideways in the element `within` finds: the document scrolling sideways, a box that
 * scrolls or clips its content sideways (a table in its scrolling wrapper, a code block), or an element
 * reaching past the right edge of `within`. Each is described as `tag.class "its text…": by N px`; none
 * when everything fits. Elements hidden from view (closed details, hidden panels, visually-hidden text
 * for screen readers) do not count; form fields scrolling their own text do not either.
 */
export async function horizontalOverflow(page: Page, within = "main"): Promise<string[]> {
  return page.evaluate((selector) => {
    const root = document.querySelector(selector);
    if (!root) return [`no ${selector} on the page`];
    const found: string[] = [];
    const describe = (el: Element) => {
      const classes = [...el.classList].map((c) => `.${c}`).join("");
      const text = (el.textContent ?? "").trim().replace(/\s+/g, " ").slice(0, 60);
      return `${el.tagName.toLowerCase()}${classes} "${text}"`;
    };
    const page = document.documentElement.scrollWidth - window.innerWidth;
    if (page > 1) found.push(`the page scrolls sideways: by ${page} px`);
    const edge = root.getBoundingClientRect().right;
    const clipsSideways = (el: Element) =>
      ["auto", "scroll", "hidden", "clip"].includes(getComputedStyle(el).overflowX);
    const past: HTMLElement[] = [];
    for (const el of root.querySelectorAll("*")) {
      if (!(el instanceof HTMLElement) || el.closest("[hidden], .visually-hidden, dialog:not([open])")) continue;
      if (["OPTION", "INPUT", "TEXTAREA", "SELECT"].includes(el.tagName)) continue;
      const rect = el.getBoundingClientRect();
      if (rect.width === 0 || rect.height === 0) continue;
      // Inside a box that scrolls or clips, that box is what is reported.
      let inside = false;
      for (let up = el.parentElement; up && up !== root && !inside; up = up.parentElement) inside = clipsSideways(up);
      if (inside) continue;
      const hiddenBy = el.scrollWidth - el.clientWidth;
      if (clipsSideways(el)) {
        if (hiddenBy > 1) found.push(`${describe(el)} scrolls or clips its content sideways: by ${hiddenBy} px`);
        continue;
      }
      // Its box, or the content running out of it (a word or a nowrap text wider than the box).
      const right = Math.max(rect.right, rect.left + el.scrollWidth);
      if (right - edge > 1) past.push(el);
    }
    // The innermost of the elements sticking out names the culprit; its ancestors stick out because of it.
    for (const el of past) {
      if (past.some((other) => other !== el && el.contains(other))) continue;
      const right = Math.max(el.getBoundingClientRect().right, el.getBoundingClientRect().left + el.scrollWidth);
      found.push(`${describe(el)} reaches past the right edge: by ${Math.round(right - edge)} px`);
    }
    return found.slice(0, 12);
  }, within);
}
