import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import {
  containerMemoryLimit,
  DEFAULT_OLD_SPACE_MB,
  decideHeap,
  HEAP_GROWING_PERCENT,
  HEAP_SIZED_BY,
  type HeapInputs,
  MALLOC_ARENAS,
  MALLOC_THRESHOLD_BYTES,
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
const SELF = "/proc/self/cgroup";

describe("the container's memory limit", () => {
  it.each([
    ["cgroup v2 with a limit", { [V2]: `${512 * MB}\n` }, 512 * MB],
    ["cgroup v2 without one", { [V2]: "max\n" }, undefined],
    ["cgroup v1 with a limit", { [V1]: `${256 * MB}\n` }, 256 * MB],
    ["cgroup v1 without one (a number near 2^63)", { [V1]: "9223372036854771712\n" }, undefined],
    ["v2 unlimited, v1 files left over", { [V2]: "max", [V1]: `${256 * MB}` }, 256 * MB],
    ["no cgroup files", {}, undefined],
    ["an unreadable value", { [V2]: "lots" }, undefined],
    [
      "a systemd unit's MemoryMax= (v2, the process's own group below the root)",
      {
        [SELF]: "0::/system.slice/payments.service\n",
        "/sys/fs/cgroup/system.slice/payments.service/memory.max": `${512 * MB}`,
      },
      512 * MB,
    ],
    [
      "a parent's limit, smaller than the group's own (a Kubernetes pod's, a slice's)",
      {
        [SELF]: "0::/kubepods/pod1/ctr\n",
        "/sys/fs/cgroup/kubepods/pod1/ctr/memory.max": "max",
        "/sys/fs/cgroup/kubepods/pod1/memory.max": `${300 * MB}`,
        "/sys/fs/cgroup/kubepods/memory.max": `${8192 * MB}`,
      },
      300 * MB,
    ],
    [
      "v2's memory.high below memory.max (the kernel throttles above it)",
      {
        [SELF]: "0::/app\n",
        "/sys/fs/cgroup/app/memory.max": `${512 * MB}`,
        "/sys/fs/cgroup/app/memory.high": `${400 * MB}`,
      },
      400 * MB,
    ],
    [
      "a v1 group seen without a namespace, with its parents' limit in memory.stat",
      {
        [SELF]: "9:name=systemd:/\n4:memory:/process_api/abc\n3:cpu,cpuacct:/\n0::/\n",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712",
        "/sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes": "9223372036854771712",
        "/sys/fs/cgroup/memory/process_api/abc/memory.stat": `cache 0\nhierarchical_memory_limit ${1024 * MB}\nhierarchical_memsw_limit 9223372036854771712\n`,
      },
      1024 * MB,
    ],
    [
      "v1 without a limit anywhere (this project's CI machine)",
      {
        [SELF]: "4:memory:/process_api/abc\n0::/\n",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712",
        "/sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes": "9223372036854771712",
        "/sys/fs/cgroup/memory/process_api/abc/memory.stat": "hierarchical_memory_limit 9223372036854771712\n",
      },
      undefined,
    ],
    [
      "a group named in /proc/self/cgroup but mounted as the root (a container's own namespace)",
      { [SELF]: "0::/docker/abc\n", [V2]: `${256 * MB}` },
      256 * MB,
    ],
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
      `--heap-growing-percent=${HEAP_GROWING_PERCENT}`,
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
      `--heap-growing-percent=${HEAP_GROWING_PERCENT}`,
      `--max-semi-space-size=${SEMI_SPACE_MB}`,
    ]);
    expect(decideHeap(inputs({}, { nodeOptions: "--max-semi-space-size=32" })).flags).toEqual([
      `--max-old-space-size=${DEFAULT_OLD_SPACE_MB}`,
      `--heap-growing-percent=${HEAP_GROWING_PERCENT}`,
    ]);
    expect(decideHeap(inputs({}, { execArgv: ["--max_semi_space_size=8"] })).reason).not.toContain("young");
  });

  it("paces the old space's growth (the footprint), unless the operator did", () => {
    expect(decideHeap(inputs({})).reason).toContain(`grown ${HEAP_GROWING_PERCENT} % past its live objects`);
    expect(decideHeap(inputs({}, { nodeOptions: "--heap-growing-percent=50" })).flags).toEqual([
      `--max-old-space-size=${DEFAULT_OLD_SPACE_MB}`,
      `--max-semi-space-size=${SEMI_SPACE_MB}`,
    ]);
    expect(decideHeap(inputs({}, { execArgv: ["--heap_growing_percent=50"] })).reason).not.toContain("grown");
  });
});

/** process.execve standing in for the real one: records its arguments, then throws as if replaced. */
function recordingExecve() {
  const calls: unknown[][] = [];
  // cast: the stand-in throws as the real execve never returns, and sizeHeap only calls it.
  const execve = ((...args: unknown[]) => {
    calls.push(args);
    throw new Error("replaced");
  }) as never;
  return { calls, execve };
}

describe("sizing the running process", () => {
  const proc = {
    execPath: "/usr/bin/node",
    execArgv: ["--enable-source-maps"],
    argv: ["/usr/bin/node", "dist/main.js", "x"],
    env: { A: "1" },
  };

  it("restarts it with the flag first, the rest of its command unchanged", () => {
    const { calls, execve } = recordingExecve();
    expect(() => sizeHeap(inputs({}), { ...proc, execve })).toThrow("replaced");
    expect(calls).toEqual([
      [
        "/usr/bin/node",
        [
          "/usr/bin/node",
          `--max-old-space-size=${DEFAULT_OLD_SPACE_MB}`,
          `--heap-growing-percent=${HEAP_GROWING_PERCENT}`,
          `--max-semi-space-size=${SEMI_SPACE_MB}`,
          "--enable-source-maps",
          "dist/main.js",
          "x",
        ],
        {
          MALLOC_ARENA_MAX: MALLOC_ARENAS,
          MALLOC_TRIM_THRESHOLD_: MALLOC_THRESHOLD_BYTES,
          MALLOC_MMAP_THRESHOLD_: MALLOC_THRESHOLD_BYTES,
          A: "1",
          [HEAP_SIZED_BY]: `no container memory limit found: V8's old space is capped at ${DEFAULT_OLD_SPACE_MB} MB, grown ${HEAP_GROWING_PERCENT} % past its live objects between full collections, the young generation's semi-spaces at ${SEMI_SPACE_MB} MB`,
        },
      ],
    ]);
  });

  it("leaves the operator's MALLOC_ARENA_MAX as it is", () => {
    const { calls, execve } = recordingExecve();
    const env = { MALLOC_ARENA_MAX: "8" };
    expect(() => sizeHeap(inputs({}), { ...proc, env, execve })).toThrow("replaced");
    expect(calls[0]?.[2]).toMatchObject({ MALLOC_ARENA_MAX: "8" });
  });

  it("leaves glibc's thresholds to the operator who set either of them", () => {
    const { calls, execve } = recordingExecve();
    const env = { MALLOC_MMAP_THRESHOLD_: "1048576" };
    expect(() => sizeHeap(inputs({}), { ...proc, env, execve })).toThrow("replaced");
    expect(calls[0]?.[2]).toMatchObject({ MALLOC_MMAP_THRESHOLD_: "1048576" });
    expect(calls[0]?.[2]).not.toHaveProperty("MALLOC_TRIM_THRESHOLD_");
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
      `start node with --max-old-space-size=${DEFAULT_OLD_SPACE_MB} --heap-growing-percent=${HEAP_GROWING_PERCENT} --max-semi-space-size=${SEMI_SPACE_MB}`,
    );
  });
});

describe("the restarted process (Node 22.15+ and 24, process.execve)", () => {
  // cast: process.execve is Node 22.15+ and 24's, not in @types/node 20's Process (as in heap-at-start.ts).
  const canRestart = typeof (process as { execve?: unknown }).execve === "function";

  it.runIf(canRestart)(
    "runs with the heap the rule gives a 256 MB container, keeps its pid, and holds a burst of 80 MB of live objects",
    async () => {
      // A real restart under a fake cgroup v2 limit: the child sizes itself as heap-at-start.ts does,
      // execve replaces it, and the second run reports what V8 was given. 80 MB of arrays kept alive at
      // once stands for a burst of requests in flight: the half of the limit the rule gives the old
      // space (128 MB) must hold it, not end in "heap out of memory".
      const heapUrl = new URL("./heap.ts", import.meta.url).href;
      const code = [
        `import { writeSync } from "node:fs";`,
        `import v8 from "node:v8";`,
        `const { processHeapInputs, sizeHeap } = await import(${JSON.stringify(heapUrl)});`,
        `writeSync(1, "pid " + process.pid + "\\n");`,
        `const read = (path) => (path === "/sys/fs/cgroup/memory.max" ? String(256 * 2 ** 20) : undefined);`,
        `const note = sizeHeap({ ...processHeapInputs(), read }, { execve: process.execve.bind(process), execPath: process.execPath, execArgv: process.execArgv, argv: process.argv, env: process.env });`,
        `const burst = [];`,
        `for (let i = 0; i < 80; i++) burst.push(new Array(2 ** 17).fill(i));`,
        `console.log(JSON.stringify({ note, limitMb: v8.getHeapStatistics().heap_size_limit / 2 ** 20, usedMb: process.memoryUsage().heapUsed / 2 ** 20, arenas: process.env.MALLOC_ARENA_MAX }));`,
      ].join("\n");
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ["--import", "tsx", "--input-type=module", "-e", code],
        { cwd: fileURLToPath(new URL(".", import.meta.url)), env: { ...process.env, NODE_OPTIONS: "" } },
      );
      const [first, second, report] = stdout.trim().split("\n");
      expect(second).toBe(first);
      const { note, limitMb, usedMb, arenas } = JSON.parse(report ?? "{}");
      expect(note).toContain("container memory limit 256 MB: V8's old space is capped at 128 MB");
      // V8's limit is the old space's plus the young generation's (a few semi-spaces of 4 MB).
      expect(limitMb).toBeGreaterThanOrEqual(128);
      expect(limitMb).toBeLessThan(128 + 64);
      expect(usedMb).toBeGreaterThan(80);
      expect(arenas).toBe(MALLOC_ARENAS);
    },
    60_000,
  );
});
