// Reads a V8 CPU profile (`node --cpu-prof` writes one `.cpuprofile` JSON file per process at exit) and
// sums the samples where each function was on top of the stack: its self time. Used by
// `npm run bench:profile` (./profile.ts) to show where a scenario's CPU goes. Percentages are of the
// busy samples (everything but V8's "(idle)"), so they can be compared between runs on a loaded and an
// idle machine, which absolute times cannot.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { fileURLToPath } from "node:url";

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface SelfTime {
  /** `function (file:line)` */
  name: string;
  /** The module it belongs to (see moduleOf). */
  module: string;
  samples: number;
  /** Share of the busy samples, 0-100. */
  percent: number;
}

export interface ProfileSummary {
  file: string;
  /** Samples outside "(idle)". */
  busySamples: number;
  /** Share of all samples spent idle (the process waited for work), 0-100. */
  idlePercent: number;
  functions: SelfTime[];
  modules: SelfTime[];
}

/**
 * Where a frame's code lives, short: `express-openapi-validator`, `server/src/store/sqlite.ts`,
 * `node:internal/async_hooks`, or V8's own pseudo-frames (`(garbage collector)`, `(program)`).
 */
export function moduleOf(url: string, functionName: string): string {
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)";
  const path = url.replace(/^file:\/\//, "");
  const pkg = /.*node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg?.[1]) return pkg[1];
  const own = /\/(server\/src\/.*|test\/.*|generated\/.*|server\/dist\/.*)$/.exec(path);
  if (own?.[1]) return own[1];
  if (path.startsWith("node:")) return path;
  return path;
}

export function shortFile(url: string): string {
  const path = url.replace(/^file:\/\//, "");
  const pkg = /.*node_modules\/(.*)$/.exec(path);
  if (pkg?.[1]) return pkg[1];
  const own = /\/((?:server|test|generated)\/.*)$/.exec(path);
  return own?.[1] ?? path;
}

/**
 * Frames of a bundle (the bench's targets are bundled, ./bundle.ts) are mapped back to their source
 * file and line through the bundle's linked source map, so self time is told per source file as under
 * tsx, not lumped into one bundle.
 */
const sourceMaps = new Map<string, SourceMap | null>();

function sourceMapOf(url: string): SourceMap | null {
  let map = sourceMaps.get(url);
  if (map === undefined) {
    map = null;
    if (url.startsWith("file://")) {
      const path = `${fileURLToPath(url)}.map`;
      if (existsSync(path)) map = new SourceMap(JSON.parse(readFileSync(path, "utf8")));
    }
    sourceMaps.set(url, map);
  }
  return map;
}

/** A bundle frame mapped to its source file and line (a CPU profile's or a sampling heap profile's). */
export function original(frame: CallFrame): CallFrame {
  // The bench's own bundles are .mjs; the production build's chunks (server/dist) are .js beside their maps.
  const map = /\.m?js$/.test(frame.url) && !frame.url.includes("/node_modules/") ? sourceMapOf(frame.url) : null;
  if (!map) return frame;
  const entry = map.findEntry(frame.lineNumber, frame.columnNumber) as {
    originalSource?: string;
    originalLine?: number;
  };
  if (!entry?.originalSource) return frame;
  const source = entry.originalSource.startsWith("file://")
    ? entry.originalSource
    : new URL(entry.originalSource, frame.url).href;
  return { ...frame, url: source, lineNumber: entry.originalLine ?? frame.lineNumber };
}

/** Rewrites a profile's bundle frames to their source files and lines (see `original`), in place. */
export function mapToSources(file: string): void {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  for (const node of profile.nodes) node.callFrame = original(node.callFrame);
  writeFileSync(file, JSON.stringify(profile));
}

/** A profile with its bundle frames mapped to their source files and lines (see `original`). */
export function readProfile(file: string): CpuProfile {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  for (const node of profile.nodes) node.callFrame = original(node.callFrame);
  return profile;
}

/** Self time per function and per module, largest first. */
export function summarize(file: string, top = 15): ProfileSummary & { allFunctions: SelfTime[] } {
  const profile = readProfile(file);
  const byFunction = new Map<string, SelfTime>();
  const byModule = new Map<string, SelfTime>();
  let idle = 0;
  let total = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    total += hits;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === "(idle)") {
      idle += hits;
      continue;
    }
    const module = moduleOf(url, functionName);
    const name =
      url === ""
        ? functionName || "(anonymous)"
        : `${functionName || "(anonymous)"} (${shortFile(url)}:${lineNumber + 1})`;
    const f = byFunction.get(name) ?? { name, module, samples: 0, percent: 0 };
    f.samples += hits;
    byFunction.set(name, f);
    const m = byModule.get(module) ?? { name: module, module, samples: 0, percent: 0 };
    m.samples += hits;
    byModule.set(module, m);
  }
  const busy = total - idle;
  const ranked = (map: Map<string, SelfTime>) =>
    [...map.values()]
      .map((s) => ({ ...s, percent: busy > 0 ? (100 * s.samples) / busy : 0 }))
      .sort((a, b) => b.samples - a.samples);
  const allFunctions = ranked(byFunction);
  return {
    file,
    busySamples: busy,
    idlePercent: total > 0 ? (100 * idle) / total : 0,
    functions: allFunctions.slice(0, top),
    modules: ranked(byModule).slice(0, top),
    allFunctions,
  };
}

/** The summary as text: the top functions, then the top modules. */
export function formatSummary(summary: ProfileSummary, title: string): string {
  const row = (s: SelfTime) => `${s.percent.toFixed(1).padStart(5)} %  ${s.name}`;
  return [
    `${title}: ${summary.busySamples} busy samples, ${summary.idlePercent.toFixed(1)} % idle`,
    "  self time by function:",
    ...summary.functions.map((s) => `    ${row(s)}`),
    "  self time by module:",
    ...summary.modules.map((s) => `    ${row(s)}`),
  ].join("\n");
}
