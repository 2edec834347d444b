import { describe, expect, it } from "vitest";
import { environmentOf, erasureText, sandboxesUnavailable } from "./environment.ts";

const qa = { id: "sbx_4Kd8Lm2Nq6Rt1Vx5Zb9Cf3Hj", name: "QA: Ana" };

describe("environmentOf", () => {
  it("tells production, the default sandbox and a sandbox on demand apart, naming the sandbox", () => {
    expect(environmentOf({ key: { livemode: true, scopes: ["*"] }, sandbox: null })).toMatchObject({
      kind: "production",
      title: "Production",
    });
    const main = environmentOf({ key: { livemode: false, scopes: ["*"] }, sandbox: null });
    expect(main).toMatchObject({ kind: "sandbox", title: "Sandbox" });
    expect(main.detail).toContain("default sandbox");
    const own = environmentOf({ key: { livemode: false, scopes: ["charges"] }, sandbox: qa });
    expect(own).toMatchObject({ kind: "sandbox-on-demand", label: "Sandbox “QA: Ana”", title: "Sandbox QA: Ana" });
    expect(own.detail).toContain(qa.id);
    expect(own.detail).toContain("not the default sandbox's");
  });
});

describe("sandboxesUnavailable", () => {
  it("is null for a `*` key of the account, in either environment", () => {
    expect(sandboxesUnavailable({ key: { livemode: false, scopes: ["*"] }, sandbox: null })).toBeNull();
    expect(sandboxesUnavailable({ key: { livemode: true, scopes: ["*"] }, sandbox: null })).toBeNull();
  });

  it("says why for a key without `*`, naming its scopes, and for a session inside a sandbox", () => {
    const narrow = sandboxesUnavailable({ key: { livemode: false, scopes: ["charges", "merchants"] }, sandbox: null });
    expect(narrow).toContain("scope *");
    expect(narrow).toContain("charges, merchants");
    const inside = sandboxesUnavailable({ key: { livemode: false, scopes: ["*"] }, sandbox: qa });
    expect(inside).toContain("QA: Ana");
    expect(inside).toContain(qa.id);
    expect(inside).toContain("default sandbox or of production");
  });
});

describe("erasureText", () => {
  it("names the sandbox and what is erased with it", () => {
    const text = erasureText(qa);
    for (const word of ["QA: Ana", qa.id, "charges", "service keys", "vault key", "cannot be undone"]) {
      expect(text).toContain(word);
    }
  });
});
