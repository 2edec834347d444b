import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../support/process.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// The README runs as written (README "Contributing: runnable README blocks"). Every fenced block whose
// info string is exactly `sh readme-test` is run, in the order of the README, in one bash session
// against a fresh server: KEY is that server's first-start sandbox key and API its URL, as the
// README's walk-through tells a reader to set them. The run fails when a block exits non-zero (the
// blocks use `set -e` semantics, and `curl --fail-with-body` on every call shown succeeding), and the
// server's answers must match, one for one, the curl calls of the blocks: a 2xx for each, or the
// status a call states with a trailing `# expect: <status>` comment.

const README = resolve(ROOT, "README.md");
const MARKER = "sh readme-test";

export interface Block {
  /** 1-based line of the opening fence in the README. */
  line: number;
  code: string;
}

/** The runnable blocks of a Markdown text, in order. */
export function runnableBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]?.trim() !== `\`\`\`${MARKER}`) continue;
    const start = i;
    const code: string[] = [];
    for (i++; i < lines.length && lines[i]?.trim() !== "```"; i++) code.push(lines[i] ?? "");
    if (i >= lines.length) throw new Error(`README.md:${start + 1}: a ${MARKER} block is never closed`);
    blocks.push({ line: start + 1, code: code.join("\n") });
  }
  return blocks;
}

/**
 * The curl calls of a block and the status each expects: one per logical line (backslash
 * continuations joined) that runs curl, outside comments. "2xx" unless the line ends in
 * `# expect: <status>`.
 */
export function curlCalls(block: Block): { line: number; expect: string }[] {
  const calls: { line: number; expect: string }[] = [];
  const physical = block.code.split("\n");
  for (let i = 0; i < physical.length; i++) {
    const first = i;
    let logical = physical[i] ?? "";
    while (logical.endsWith("\\") && i + 1 < physical.length) logical = `${logical.slice(0, -1)} ${physical[++i]}`;
    if (logical.trim().startsWith("#")) continue;
    const runs = logical.match(/(?:^|[\s(|;&])curl\s/g) ?? [];
    if (runs.length > 1) {
      throw new Error(`README.md:${block.line + 1 + first}: one curl call per line, so each answer can be checked`);
    }
    if (runs.length === 1) {
      calls.push({ line: block.line + 1 + first, expect: /#\s*expect:\s*(\d{3})\s*$/.exec(logical)?.[1] ?? "2xx" });
    }
  }
  return calls;
}

function bash(script: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const child = spawn("bash", ["-s"], { env, stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      output += c;
    });
    child.stderr.setEncoding("utf8").on("data", (c: string) => {
      output += c;
    });
    child.on("exit", (code) => done({ code, output }));
    child.stdin.end(script);
  });
}

describe("the README's runnable blocks", () => {
  const blocks = runnableBlocks(readFileSync(README, "utf8"));
  let server: TestServer;
  const answers: string[] = [];

  beforeAll(async () => {
    server = await startTestServer();
    server.running.server.on("request", (req, res) => {
      res.on("finish", () => answers.push(`${res.statusCode} ${req.method} ${req.url}`));
    });
  });
  afterAll(() => server?.close());

  it("exist, and each curl call is checkable", () => {
    expect(blocks.length).toBeGreaterThan(5);
    expect(blocks.flatMap(curlCalls).length).toBeGreaterThan(5);
  });

  it("run in order against a fresh server, every call answered as the README shows", async () => {
    const script = [
      "set -euo pipefail",
      ...blocks.map((b, n) => `echo ">>> README block ${n + 1} (README.md:${b.line})"\n${b.code}`),
    ].join("\n");
    const env = {
      PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`,
      HOME: process.env.HOME ?? "/tmp",
      KEY: server.sandboxKey,
      API: server.url,
    };
    const { code, output } = await bash(script, env);
    expect(code, `the README's blocks failed:\n${output.slice(-3000)}`).toBe(0);

    const expected = blocks.flatMap(curlCalls);
    expect(answers.length, `answers:\n${answers.join("\n")}`).toBe(expected.length);
    expected.forEach((call, i) => {
      const status = answers[i]?.split(" ")[0] ?? "";
      const ok = call.expect === "2xx" ? /^2\d\d$/.test(status) : status === call.expect;
      expect(ok, `README.md:${call.line} expects ${call.expect}, the server answered ${answers[i]}`).toBe(true);
    });
  }, 60_000);
});

describe("the README test's own parsing", () => {
  it("finds marked blocks only, and reads each curl call's expectation", () => {
    const md = [
      "```sh",
      "curl -s http://x  # not runnable",
      "```",
      "```sh readme-test",
      'out=$(curl -s --fail-with-body "$API/a" \\',
      '  -d \'{"order": "#1"}\')',
      "# curl in a comment is not a call",
      'curl -s -X POST "$API/b" -d "{}"   # expect: 409',
      "```",
    ].join("\n");
    const blocks = runnableBlocks(md);
    expect(blocks).toHaveLength(1);
    expect(blocks[0]?.line).toBe(4);
    expect(curlCalls(blocks[0] as Block)).toEqual([
      { line: 5, expect: "2xx" },
      { line: 8, expect: "409" },
    ]);
  });

  it("refuses two curl calls on one line, and an unclosed block", () => {
    expect(() => curlCalls({ line: 1, code: "curl a; curl b" })).toThrow(/one curl call per line/);
    expect(() => runnableBlocks("```sh readme-test\necho")).toThrow(/never closed/);
  });
});
