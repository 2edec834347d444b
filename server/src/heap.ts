// The V8 heap's size, set when the server process starts (issue 36, docs/operating.md "Start-up and
// memory"). Left to V8, the old space may grow to a quarter of the machine's memory (4 GB on a 16 GB
// host), and V8 lets it grow to up to 4 times its live objects between full collections: under load,
// peak RSS 230-270 MB with 32 MB of live objects. Two settings keep the default footprint in a small
// container without making an unusual burst fatal:
// - a ceiling on the old space, against bursts: an operator's own `--max-old-space-size` (on the command
//   line or in NODE_OPTIONS) is left alone; in a container with a memory limit (the smallest on the
//   process's cgroup or one above it: containerMemoryLimit), each server process gets half of the
//   limit, divided among WORKERS processes (the other half is for what lives outside V8's old space:
//   the young generation, code, the node binary, SQLite's page cache); otherwise DEFAULT_OLD_SPACE_MB;
// - the pace of its growth, for the footprint: HEAP_GROWING_PERCENT past the live objects.
// With them, the young generation's semi-spaces are capped at 4 MB each (--max-semi-space-size, SEMI_SPACE_MB),
// unless the operator set that too: Node 24's V8 lets them grow to 64 MB, so with the same old space its
// heap may reach 288 MB instead of 144 (v8.getHeapStatistics().heap_size_limit) and it held 64 MB of
// young generation at rest, 169 MB resident before any request (issue 36); 16 MB (Node 20's default)
// still held 32 MB at rest. The restarted process also gets MALLOC_ARENA_MAX=2 (MALLOC_ARENAS) and
// fixed malloc trim and mmap thresholds (MALLOC_THRESHOLD_BYTES).
// V8 fixes its heap limits when the process starts, so the flag cannot be set from inside: the process
// replaces itself (process.execve, Node 22.15+ and 24: same pid, same stdio, nothing open yet) with
// the same command plus the flag. On Node 20, which has no execve, the heap stays V8's and the server
// logs the flag that would cap it: starting a second process to carry the first one's signals would
// outlive a `kill -9` of the first.

import { readFileSync } from "node:fs";

/**
 * The old space's ceiling without a container limit: a bound against an unusual burst (a heap out of
 * memory ends the process), not the footprint, which HEAP_GROWING_PERCENT keeps. Until 2026-11-28 it
 * was 96 MB and did both: three times the 32 MB live at saturation, but V8 then let the old space grow
 * only to about 1.3 times its live size (heap-controller.cc scales the factor with the maximum), so a
 * burst whose live objects passed 96 MB killed the process, and full collections were ten times as
 * frequent as uncapped (13.7 per 1,000 charges at 150/s against 1.4).
 */
export const DEFAULT_OLD_SPACE_MB = 1024;
/**
 * How far V8 lets the old space grow past what its last full collection left live before the next one
 * (--heap-growing-percent: a factor of 1.2), unless the operator set it. Left to V8, the factor rises to
 * 4 with a large maximum (peak RSS at saturation 271 MB); 20 keeps it near what the 96 MB cap gave, with
 * the ceiling above for bursts. Node 24.21, two runs each of `npm run bench:heap` (2026-11-28): peak RSS
 * 183 and 186 MB at 1,553-1,576 charges/s, against 185-188 MB at 1,378-1,467 with the 96 MB cap; 50:
 * 196 MB.
 */
export const HEAP_GROWING_PERCENT = 20;
/** The share of a container's memory limit V8's old space may take, all processes together. */
export const CONTAINER_SHARE = 0.5;
/**
 * Each of the young generation's two semi-spaces at most (Node 20's V8 default is 16, Node 24's 64).
 * 4: the young generation is committed at its largest from the first requests on (start-up alone fills
 * it), so each MB here is two MB resident at rest and at the peak; 16 held the idle production build at
 * 172 MB resident on Node 24, 8 at 158 (issue 36), and at saturation 4 rather than 8 took 8 MB off the
 * peak (`npm run bench:heap`, 2026-11-28). A charge allocates about 260 KB (`npm run bench:alloc`), so
 * 4 MB still takes some 15 charges between young collections, whose pause depends on what survives
 * them (the requests in flight), not on the space's size.
 */
export const SEMI_SPACE_MB = 4;
/**
 * glibc's malloc arenas in the restarted process (MALLOC_ARENA_MAX, unless the operator set it): by
 * default up to eight per core, each thread that allocates (libuv's pool, V8's platform threads, the
 * SQLite checkpointer) may get its own and keep what it freed. Two, as container images of glibc
 * programs commonly set; idle resident 172 -> 167 MB on Node 24 (issue 36).
 */
export const MALLOC_ARENAS = "2";
/**
 * glibc's trim and mmap thresholds in the restarted process (MALLOC_TRIM_THRESHOLD_ and
 * MALLOC_MMAP_THRESHOLD_, unless the operator set either), fixed at 128 KiB, their starting values. Left
 * to glibc, the mmap threshold rises with every large block freed (up to 32 MB), after which such blocks
 * come from the heap and stay resident once freed; fixed, a large block is mapped and unmapped on its
 * own, and free memory above 128 KiB at the heap's top goes back. Peak RSS at saturation 203 -> 188 MB
 * with SEMI_SPACE_MB 4 (two runs each of `npm run bench:heap`, Node 24.21, 2026-11-28).
 */
export const MALLOC_THRESHOLD_BYTES = "131072";
/** No process gets less than this, however small the limit: below it the server cannot start. */
export const MIN_OLD_SPACE_MB = 64;
/** cgroup v1 reports "no limit" as a number near 2^63. */
const UNLIMITED_BYTES = 2 ** 60;

/** Where the cgroup file systems are mounted: v2's unified tree, and v1's memory controller. */
const CGROUP_V2_ROOT = "/sys/fs/cgroup";
const CGROUP_V1_ROOT = "/sys/fs/cgroup/memory";
/** The process's own groups, one line per hierarchy: `0::/path` (v2), `4:memory:/path` (v1). */
const PROC_CGROUP = "/proc/self/cgroup";

/** What the rule reads, injectable for tests. */
export interface HeapInputs {
  /** A file's text, or undefined when it cannot be read. */
  read(path: string): string | undefined;
  execArgv: readonly string[];
  nodeOptions: string | undefined;
  /** The WORKERS setting as found in the environment (undefined: one process). */
  workers: string | undefined;
  /** Why the heap was sized, when this process is the one sizeHeap restarted (HEAP_SIZED_BY). */
  sizedBy?: string | undefined;
}

/**
 * Set in the restarted process's environment: the reason its flag was chosen, so its start-up log says
 * that rather than crediting the operator with the flag this code added.
 */
export const HEAP_SIZED_BY = "PAYMENTS_HEAP_SIZED_BY";

/** A limit file's bytes, or undefined for "max", v1's "no limit" (a number near 2^63) or no file. */
function limitIn(text: string | undefined): number | undefined {
  const trimmed = text?.trim();
  if (trimmed === undefined || trimmed === "" || trimmed === "max") return undefined;
  const bytes = Number(trimmed);
  return Number.isFinite(bytes) && bytes > 0 && bytes < UNLIMITED_BYTES ? bytes : undefined;
}

/** `/a/b` and every group above it, up to the mount's root (""), nearest first. */
function selfAndAncestors(path: string): string[] {
  const parts = path.split("/").filter((part) => part !== "");
  return parts.map((_, i) => `/${parts.slice(0, parts.length - i).join("/")}`).concat("");
}

/**
 * The process's group in the v2 hierarchy and in v1's memory controller, from /proc/self/cgroup; "/"
 * when the file says nothing (then only the mount's root is read, as in a container whose own group is
 * mounted there).
 */
function ownGroups(read: HeapInputs["read"]): { v2: string; v1: string } {
  const groups = { v2: "/", v1: "/" };
  for (const line of (read(PROC_CGROUP) ?? "").split("\n")) {
    const [, controllers, path] = /^\d+:([^:]*):(\/.*)$/.exec(line.trim()) ?? [];
    if (path === undefined) continue;
    if (controllers === "") groups.v2 = path;
    else if (controllers?.split(",").includes("memory")) groups.v1 = path;
  }
  return groups;
}

/**
 * The container's memory limit in bytes, or undefined when there is none (or it cannot be read): the
 * smallest limit on the process's own group or any group above it. Reading only the mount's root
 * (`/sys/fs/cgroup/memory.max`) finds a container's limit where the container has its own cgroup
 * namespace (Docker and Kubernetes on cgroup v2), but not a systemd unit's `MemoryMax=` (the process
 * sits in /system.slice/payments.service, the root has no limit file) nor a v1 group seen without a
 * namespace, as on this project's own CI machine (`4:memory:/process_api/…`); and a limit set on a
 * parent (a Kubernetes pod's, a systemd slice's) binds its children without showing in their files.
 * - cgroup v2: `memory.max` (the kill limit) and `memory.high` (above it the kernel throttles the
 *   group and reclaims its memory: a server pushed there stalls, so it counts as a limit too);
 * - cgroup v1: `memory.limit_in_bytes`, and `hierarchical_memory_limit` in `memory.stat`, which is the
 *   group's limit with its parents' applied.
 */
export function containerMemoryLimit(read: HeapInputs["read"]): number | undefined {
  const own = ownGroups(read);
  const limits: number[] = [];
  const add = (bytes: number | undefined) => {
    if (bytes !== undefined) limits.push(bytes);
  };
  for (const group of selfAndAncestors(own.v2)) {
    add(limitIn(read(`${CGROUP_V2_ROOT}${group}/memory.max`)));
    add(limitIn(read(`${CGROUP_V2_ROOT}${group}/memory.high`)));
  }
  for (const group of selfAndAncestors(own.v1)) {
    add(limitIn(read(`${CGROUP_V1_ROOT}${group}/memory.limit_in_bytes`)));
    const stat = read(`${CGROUP_V1_ROOT}${group}/memory.stat`);
    add(limitIn(/^hierarchical_memory_limit (\d+)$/m.exec(stat ?? "")?.[1]));
  }
  return limits.length === 0 ? undefined : Math.min(...limits);
}

export interface HeapDecision {
  /** The flags to start with; none when the operator sized the heap. */
  flags: string[];
  /** For the start-up log: what was decided and why. */
  reason: string;
}

const EXPLICIT = /(^|\s)--max[-_]old[-_]space[-_]size(=|\s|$)/;
const EXPLICIT_SEMI = /(^|\s)--max[-_]semi[-_]space[-_]size(=|\s|$)/;
const EXPLICIT_GROWING = /(^|\s)--heap[-_]growing[-_]percent(=|\s|$)/;

const setByOperator = (inputs: HeapInputs, flag: RegExp) =>
  inputs.execArgv.some((arg) => flag.test(arg)) || flag.test(inputs.nodeOptions ?? "");

export function decideHeap(inputs: HeapInputs): HeapDecision {
  if (setByOperator(inputs, EXPLICIT)) {
    return { flags: [], reason: inputs.sizedBy ?? "the heap is sized by the operator's --max-old-space-size" };
  }
  const paced = setByOperator(inputs, EXPLICIT_GROWING) ? [] : [`--heap-growing-percent=${HEAP_GROWING_PERCENT}`];
  const young = setByOperator(inputs, EXPLICIT_SEMI) ? [] : [`--max-semi-space-size=${SEMI_SPACE_MB}`];
  const youngNote =
    (paced.length > 0 ? `, grown ${HEAP_GROWING_PERCENT} % past its live objects between full collections` : "") +
    (young.length > 0 ? `, the young generation's semi-spaces at ${SEMI_SPACE_MB} MB` : "");
  const limit = containerMemoryLimit(inputs.read);
  if (limit === undefined) {
    return {
      flags: [`--max-old-space-size=${DEFAULT_OLD_SPACE_MB}`, ...paced, ...young],
      reason: `no container memory limit found: V8's old space is capped at ${DEFAULT_OLD_SPACE_MB} MB${youngNote}`,
    };
  }
  const parsed = Number(inputs.workers);
  const workers = Number.isInteger(parsed) && parsed > 1 ? parsed : 1;
  const limitMb = Math.floor(limit / 2 ** 20);
  const mb = Math.max(MIN_OLD_SPACE_MB, Math.floor((limitMb * CONTAINER_SHARE) / workers));
  return {
    flags: [`--max-old-space-size=${mb}`, ...paced, ...young],
    reason: `container memory limit ${limitMb} MB${workers > 1 ? ` for ${workers} workers` : ""}: V8's old space is capped at ${mb} MB per process${youngNote}`,
  };
}

type Execve = (file: string, args: string[], env: NodeJS.ProcessEnv) => never;

/**
 * Applies the decision: replaces this process with one started with the flag, where Node can
 * (process.execve). Returns what to log when the process goes on as it is.
 */
export function sizeHeap(
  inputs: HeapInputs,
  proc: {
    execve?: Execve;
    execPath: string;
    execArgv: readonly string[];
    argv: readonly string[];
    env: NodeJS.ProcessEnv;
  },
): string {
  const decision = decideHeap(inputs);
  if (decision.flags.length === 0) return decision.reason;
  if (typeof proc.execve !== "function") {
    return `${decision.reason}, but this Node has no process.execve to apply it: start node with ${decision.flags.join(" ")} (or set it in NODE_OPTIONS)`;
  }
  const malloc =
    proc.env.MALLOC_TRIM_THRESHOLD_ === undefined && proc.env.MALLOC_MMAP_THRESHOLD_ === undefined
      ? { MALLOC_TRIM_THRESHOLD_: MALLOC_THRESHOLD_BYTES, MALLOC_MMAP_THRESHOLD_: MALLOC_THRESHOLD_BYTES }
      : {};
  const env = { MALLOC_ARENA_MAX: MALLOC_ARENAS, ...malloc, ...proc.env, [HEAP_SIZED_BY]: decision.reason };
  return proc.execve(proc.execPath, [proc.execPath, ...decision.flags, ...proc.execArgv, ...proc.argv.slice(1)], env);
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** The real process's inputs. */
export function processHeapInputs(): HeapInputs {
  return {
    read: readText,
    execArgv: process.execArgv,
    nodeOptions: process.env.NODE_OPTIONS,
    workers: process.env.WORKERS,
    sizedBy: process.env[HEAP_SIZED_BY],
  };
}
