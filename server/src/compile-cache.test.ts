import { describe, expect, it } from "vitest";
import { compileCacheDirectory, enableCompileCache } from "./compile-cache.ts";

// The compile cache beside the production build (compile-cache.ts). That a built server writes it once
// it listens, on a Node that has one, is checked on the build itself (test/ops/build.test.ts).

describe("the compile cache", () => {
  it("lives beside the built entry, and not beside the sources tsx runs", () => {
    expect(compileCacheDirectory("file:///srv/app/server/dist/main.js")).toBe("/srv/app/server/dist/.compile-cache/");
    expect(compileCacheDirectory("file:///srv/app/server/src/main.ts")).toBeNull();
  });

  it("is left off for the sources, whatever the Node", () => {
    expect(enableCompileCache(new URL("./main.ts", import.meta.url).href)).toEqual({ off: "running from the sources" });
  });
});
