import { describe, expect, it } from "vitest";
import { formatAmount, loadPageAssets, PAGE_CSP, renderTemplate } from "./pay-page.ts";

// The hosted page's server side (http/pay-page.ts): templates filled with escaped values, amounts
// formatted exactly for their currency's exponent, the page's CSP, and the cross-site guard of the
// public pay operation.

describe("templates", () => {
  it("escapes every value, keeps a flagged block only when its flag is set", () => {
    const out = renderTemplate(
      '<p title="{{a}}">{{b}}</p><!--if:x--><i>x</i><!--endif:x--><!--if:y--><b>y</b><!--endif:y-->',
      { a: `"><script>alert('x')</script>`, b: "Tom & Jerry <3" },
      { x: true, y: false },
    );
    expect(out).toBe(
      '<p title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;">Tom &amp; Jerry &lt;3</p><i>x</i>',
    );
  });

  it("handles blocks inside blocks", () => {
    const template = "<!--if:outer-->[<!--if:a-->a<!--endif:a--><!--if:b-->b<!--endif:b-->]<!--endif:outer-->";
    expect(renderTemplate(template, {}, { outer: true, a: true, b: false })).toBe("[a]");
    expect(renderTemplate(template, {}, { outer: false, a: true, b: true })).toBe("");
  });

  it("throws on a value or flag the caller did not give, rather than send a half-filled page", () => {
    expect(() => renderTemplate("{{missing}}", {}, {})).toThrow(/missing/);
    expect(() => renderTemplate("<!--if:z-->z<!--endif:z-->", {}, {})).toThrow(/z/);
  });

  it("fills the shipped templates with nothing left over and no inline script or style", () => {
    const assets = loadPageAssets();
    const values: Record<string, string> = {
      lang: "en",
      merchant: "M",
      description: "D",
      amount: "$1.00",
      page_token: "t",
      pay_path: "/v1/payment_links/plink_x/pay",
    };
    const flags: Record<string, boolean> = { test: true, choice: true };
    for (const m of ["card", "pix", "boleto", "oxxo", "spei", "sepa_debit"]) {
      flags[m] = true;
      values[`checked_${m}`] = "";
      values[`hidden_${m}`] = "";
    }
    const page = renderTemplate(assets.pay, values, flags);
    expect(page).not.toMatch(/\{\{|<!--if:/);
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(page).not.toMatch(/\sstyle=|<style/);
    expect(page).not.toMatch(/\son[a-z]+=/); // no inline event handlers
    const notice = renderTemplate(
      assets.notice,
      { lang: "en", state: "expired", title: "T", message: "M", merchant: "M", description: "D", amount: "$1" },
      { link: true },
    );
    expect(notice).not.toMatch(/\{\{|<!--if:/);
    expect([...assets.files.keys()].sort()).toEqual(["favicon.svg", "pay.css", "pay.js", "qr.js", "validate.js"]);
    // The QR code library is npm `qr` as installed, whole, with its licence notice; it imports nothing.
    const qr = assets.files.get("qr.js")?.body ?? "";
    expect(qr).toMatch(/^\/\*!\n \* Copyright \(c\) \d{4} Paul Miller/);
    expect(qr).toMatch(/export function encodeQR\(/);
    expect(qr).not.toMatch(/^import /m);
  });
});

describe("amounts", () => {
  it("uses the currency's ISO 4217 exponent", () => {
    expect(formatAmount(2500, "USD", "en-US")).toBe("$25.00");
    expect(formatAmount(1500, "JPY", "en-US")).toBe("¥1,500");
    expect(formatAmount(1234, "KWD", "en-US")).toMatch(/^KWD\s1\.234$/);
    expect(formatAmount(5, "USD", "en-US")).toBe("$0.05");
    expect(formatAmount(15_000, "BRL", "pt-BR")).toMatch(/^R\$\s150,00$/);
    expect(formatAmount(99_999_900, "EUR", "de-DE")).toMatch(/^999\.999,00\s€$/);
  });

  it("is exact where a float would round: the largest safe integer of cents", () => {
    expect(formatAmount(9_007_199_254_740_991, "USD", "en-US")).toBe("$90,071,992,547,409.91");
  });
});

describe("the page's Content-Security-Policy", () => {
  it("allows nothing but this server's scripts, styles and images, no inline code and no framing", () => {
    expect(PAGE_CSP).toContain("default-src 'none'");
    expect(PAGE_CSP).toContain("script-src 'self'");
    expect(PAGE_CSP).toContain("style-src 'self'");
    expect(PAGE_CSP).toContain("connect-src 'self'");
    expect(PAGE_CSP).toContain("frame-ancestors 'none'");
    expect(PAGE_CSP).not.toMatch(/unsafe|https?:|\*|data:/);
  });
});
