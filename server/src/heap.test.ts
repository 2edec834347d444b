import { describe, expect, it } from "vitest";
import {
  containerMemoryLimit,
  DEFAULT_OLD_SPACE_MB,
  decideHeap,
  HEAP_SIZED_BY,
  type HeapInputs,
  MALLOC_ARENAS,
  SEMI_SPACE_MB,
  sizeHeap,
} from "./heap.ts";

const MB = 2 ** 20;

/** The rule's inputs over a fake /sys/fs/cgroup holding `files`. */
function inputs(files: Record<string, string>, more: Partial<HeapInputs> = {}): HeapInputs {
  return { read: (path) => files[path], execArgv: [], nodeOptions: undefined, workers: undefined, ...more };
}
const V2 = "/sys/fs/cgroup/memory.max";
const V1 = "/sys/fs/cgroup/memory/memory.limit_in_bytes";

describe("the container's memory limit", () => {
  it.each([
    ["cgroup v2 with a limit", { [V2]: `${512 * MB}\n` }, 512 * MB],
    ["cgroup v2 without one", { [V2]: "max\n" }, undefined],
    ["cgroup v1 with a limit", { [V1]: `${256 * MB}\n` }, 256 * MB],
    ["cgroup v1 without one (a number near 2^63)", { [V1]: "9223372036854771712\n" }, undefined],
    ["v2 unlimited, v1 files left over", { [V2]: "max", [V1]: `${256 * MB}` }, 256 * MB],
    ["no cgroup files", {}, undefined],
    ["an unreadable value", { [V2]: "lots" }, undefined],
  ])("%s", (_, files, expected) => {
    expect(containerMemoryLimit(inputs(files).read)).toBe(expected);
  });
});

describe("the heap's size", () => {
  it("is half of a container's limit", () => {
    expect(decideHeap(inputs({ [V2]: `${512 * MB}` })).flags[0]).toBe("--max-old-space-size=256");
    expect(decideHeap(inputs({ [V1]: `${300 * MB}` })).flags[0]).toBe("--max-old-space-size=150");
  });

  it("shares that half among WORKERS processes, never below the floor", () => {
    expect(decideHeap(inputs({ [V2]: `${1024 * MB}` }, { workers: "4" })).flags[0]).toBe("--max-old-space-size=128");
    expect(decideHeap(inputs({ [V2]: `${128 * MB}` }, { workers: "4" })).flags[0]).toBe("--max-old-space-size=64");
  });

  it("is the default without a limit", () => {
    const decision = decideHeap(inputs({ [V2]: "max" }));
    expect(decision.flags).toEqual([
      `--max-old-space-size=${DEFAULT_OLD_SPACE_MB}`,
      `--max-semi-space-size=${SEMI_SPACE_MB}`,
    ]);
    expect(decision.reason).toContain("no container memory limit");
  });

  it.each([
    ["on the command line", { execArgv: ["--max-old-space-size=300"] }],
    ["in underscores", { execArgv: ["--max_old_space_size=300"] }],
    ["in NODE_OPTIONS", { nodeOptions: "--enable-source-maps --max-old-space-size=300" }],
  ])("is the operator's when set %s", (_, more) => {
    expect(decideHeap(inputs({ [V2]: `${512 * MB}` }, more)).flags).toEqual([]);
  });

  it("caps the young generation too (Node 24's V8 lets it grow to 4 × Node 20's), unless the operator did", () => {
    expect(decideHeap(inputs({ [V2]: `${512 * MB}` })).flags).toEqual([
      "--max-old-space-size=256",
      `--max-semi-space-size=${SEMI_SPACE_MB}`,
    ]);
    expect(decideHeap(inputs({}, { nodeOptions: "--max-semi-space-size=32" })).flags).toEqual([
      `--max-old-space-size=${DEFAULT_OLD_SPACE_MB}`,
    ]);
    expect(decideHeap(inputs({}, { execArgv: ["--max_semi_space_size=8"] })).reason).not.toContain("young");
  });
});

describe("sizing the running process", () => {
  const proc = {
    execPath: "/usr/bin/node",
    execArgv: ["--enable-source-maps"],
    argv: ["/usr/bin/node", "dist/main.js", "x"],
    env: { A: "1" },
  };

  it("restarts it with the flag first, the rest of its command unchanged", () => {
    const calls: unknown[][] = [];
    const execve = ((...args: unknown[]) => {
      calls.push(args);
      throw new Error("replaced");
    }) as never;
    expect(() => sizeHeap(inputs({}), { ...proc, execve })).toThrow("replaced");
    expect(calls).toEqual([
      [
        "/usr/bin/node",
        [
          "/usr/bin/node",
          `--max-old-space-size=${DEFAULT_OLD_SPACE_MB}`,
          `--max-semi-space-size=${SEMI_SPACE_MB}`,
          "--enable-source-maps",
          "dist/main.js",
          "x",
        ],
        {
          MALLOC_ARENA_MAX: MALLOC_ARENAS,
          A: "1",
          [HEAP_SIZED_BY]: `no container memory limit found: V8's old space is capped at ${DEFAULT_OLD_SPACE_MB} MB, the young generation's semi-spaces at ${SEMI_SPACE_MB} MB`,
        },
      ],
    ]);
  });

  it("leaves the operator's MALLOC_ARENA_MAX as it is", () => {
    const calls: unknown[][] = [];
    const execve = ((...args: unknown[]) => {
      calls.push(args);
      throw new Error("replaced");
    }) as never;
    const env = { MALLOC_ARENA_MAX: "8" };
    expect(() => sizeHeap(inputs({}), { ...proc, env, execve })).toThrow("replaced");
    expect(calls[0]?.[2]).toMatchObject({ MALLOC_ARENA_MAX: "8" });
  });

  it("says in the restarted process why it was sized, not that the operator sized it", () => {
    const restarted = inputs({}, { execArgv: ["--max-old-space-size=96"], sizedBy: "no container memory limit found" });
    expect(sizeHeap(restarted, proc)).toBe("no container memory limit found");
  });

  it("does not restart a process the operator sized, and says how where Node cannot restart", () => {
    const execve = (() => {
      throw new Error("must not restart");
    }) as never;
    expect(sizeHeap(inputs({}, { execArgv: ["--max-old-space-size=200"] }), { ...proc, execve })).toContain("operator");
    expect(sizeHeap(inputs({}), proc)).toContain(
      `start node with --max-old-space-size=${DEFAULT_OLD_SPACE_MB} --max-semi-space-size=${SEMI_SPACE_MB}`,
    );
  });
});
