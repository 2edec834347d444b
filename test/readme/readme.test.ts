import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../support/process.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// The README and the guides run as written (docs/contributing.md "Runnable blocks in the README and
// the guides"). In each of README.md and docs/*.md, every fenced block whose info string is exactly
// `sh readme-test` is run, in the order of that file, in one bash session of the file's own against a
// fresh server of its own: KEY is that server's first-start sandbox key and API its URL, as the
// README's walk-through tells a reader to set them, and nothing else carries over from another file,
// so a guide runs for a reader who opens only that guide. A file's run fails when a block exits
// non-zero (the blocks use `set -e` semantics, and `curl --fail-with-body` on every call shown
// succeeding), and the server's answers must match, one for one, the curl calls of the file's blocks: a
// 2xx for each, or the status a call states with a trailing `# expect: <status>` comment.

const MARKER = "sh readme-test";

/** README.md, then every guide in docs/, as paths from the repository's root. */
export const DOCUMENTS = [
  "README.md",
  ...readdirSync(resolve(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`),
];

export interface Block {
  /** The file the block is in (for messages), as a path from the repository's root. */
  file: string;
  /** 1-based line of the opening fence in the file. */
  line: number;
  code: string;
}

/** The runnable blocks of a Markdown text, in order. */
export function runnableBlocks(markdown: string, file = "README.md"): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]?.trim() !== `\`\`\`${MARKER}`) continue;
    const start = i;
    const code: string[] = [];
    for (i++; i < lines.length && lines[i]?.trim() !== "```"; i++) code.push(lines[i] ?? "");
    if (i >= lines.length) throw new Error(`${file}:${start + 1}: a ${MARKER} block is never closed`);
    blocks.push({ file, line: start + 1, code: code.join("\n") });
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
      throw new Error(`${block.file}:${block.line + 1 + first}: one curl call per line, so each answer can be checked`);
    }
    if (runs.length === 1) {
      calls.push({ line: block.line + 1 + first, expect: /#\s*expect:\s*(\d{3})\s*$/.exec(logical)?.[1] ?? "2xx" });
    }
  }
  return calls;
}

/** The shell functions a block defines on a line of their own (`name() { ... }`), by name. */
export function helperDefinitions(block: Block): Map<string, string> {
  const found = new Map<string, string>();
  for (const line of block.code.split("\n")) {
    const name = /^([a-z_]\w*)\(\)\s*\{.*\}\s*$/.exec(line)?.[1];
    if (name) found.set(name, line);
  }
  return found;
}

function bash(script: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    // From the repository's root, where a reader runs the guides' `npm run` commands.
    const child = spawn("bash", ["-s"], { cwd: ROOT, env, stdio: ["pipe", "pipe", "pipe"] });
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

const blocksOf = new Map(
  DOCUMENTS.map((file) => [file, runnableBlocks(readFileSync(resolve(ROOT, file), "utf8"), file)]),
);
const runnable = DOCUMENTS.filter((file) => (blocksOf.get(file) ?? []).length > 0);

describe("the documents' runnable blocks", () => {
  it("exist in the README and in the guides that walk through a flow, and each curl call is checkable", () => {
    const readme = blocksOf.get("README.md") ?? [];
    expect(readme.length).toBeGreaterThan(5);
    expect(readme.flatMap(curlCalls).length).toBeGreaterThan(5);
    expect(runnable).toEqual(expect.arrayContaining(["README.md", "docs/cashouts.md", "docs/payment-links.md"]));
    for (const file of runnable) expect(blocksOf.get(file)?.flatMap(curlCalls).length, file).toBeGreaterThan(0);
  });

  it("define, in each guide's first block, the README's helpers the guide uses, exactly as the README does", () => {
    const readmeHelpers = helperDefinitions((blocksOf.get("README.md") ?? [])[0] as Block);
    expect([...readmeHelpers.keys()].sort()).toEqual(["field", "idem"]);
    for (const file of runnable.filter((f) => f !== "README.md")) {
      const blocks = blocksOf.get(file) ?? [];
      const own = helperDefinitions(blocks[0] as Block);
      for (const [name, definition] of readmeHelpers) {
        const used = blocks.some((b) => new RegExp(`(^|[\\s(|;&])${name}(\\s|\\)|$)`, "m").test(b.code));
        if (used)
          expect(own.get(name), `${file}:${blocks[0]?.line} must define ${name} as the README does`).toBe(definition);
      }
    }
  });
});

for (const file of runnable) {
  describe(`${file}'s runnable blocks`, () => {
    const blocks = blocksOf.get(file) ?? [];
    let server: TestServer;
    const answers: string[] = [];

    beforeAll(async () => {
      server = await startTestServer();
      // The answers to curl's requests: a tool a guide runs (`npm run trigger`) sends its own, which
      // the guide does not list line by line; its exit status (set -e) stands for them.
      server.running.server.on("request", (req, res) => {
        if (!req.headers["user-agent"]?.startsWith("curl/")) return;
        res.on("finish", () => answers.push(`${res.statusCode} ${req.method} ${req.url}`));
        // A connection closed without an answer (the Sandbox-Simulate header's `timeout_after_commit`) is
        // `000`, as curl's `%{http_code}` prints it; a guide states it with `# expect: 000`.
        res.on("close", () => {
          if (!res.writableFinished) answers.push(`000 ${req.method} ${req.url}`);
        });
      });
    });
    afterAll(() => server?.close());

    it(`run in order against a fresh server, every call answered as ${file} shows`, async () => {
      const script = [
        "set -euo pipefail",
        ...blocks.map((b, n) => `echo ">>> ${file} block ${n + 1} (${file}:${b.line})"\n${b.code}`),
      ].join("\n");
      const env = {
        PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`,
        HOME: process.env.HOME ?? "/tmp",
        KEY: server.sandboxKey,
        API: server.url,
      };
      const { code, output } = await bash(script, env);
      expect(code, `${file}'s blocks failed:\n${output.slice(-3000)}`).toBe(0);
      // A helper or variable the file never defines fails quietly inside `$(...)`; bash still says so.
      expect(output, `${file} uses a command it does not define`).not.toMatch(/command not found/);

      const expected = blocks.flatMap(curlCalls);
      expect(answers.length, `answers:\n${answers.join("\n")}`).toBe(expected.length);
      expected.forEach((call, i) => {
        const status = answers[i]?.split(" ")[0] ?? "";
        const ok = call.expect === "2xx" ? /^2\d\d$/.test(status) : status === call.expect;
        expect(ok, `${file}:${call.line} expects ${call.expect}, the server answered ${answers[i]}`).toBe(true);
      });
    }, 60_000);
  });
}

describe("the README's requirements", () => {
  it("name the Node lines package.json's engines allows, as engines writes them", () => {
    const engines = (JSON.parse(readFileSync(resolve(ROOT, "package.json"), "utf8")) as { engines: { node: string } })
      .engines.node;
    const readme = readFileSync(resolve(ROOT, "README.md"), "utf8");
    const line = readme.split("\n\n").find((p) => p.startsWith("You need Node.js")) ?? "";
    expect(line, 'README\'s "You need Node.js" paragraph').toContain(`\`engines\`: \`${engines}\``);
    // Every major line engines allows is named, and no other major line is said to be needed.
    const allowed = [...engines.matchAll(/\^(\d+)\.(\d+)\.\d+/g)].map((m) =>
      m[2] === "0" ? m[1] : `${m[1]}.${m[2]}+`,
    );
    const needs = /^You need Node\.js ([^(]*)\(/.exec(line)?.[1] ?? "";
    for (const version of allowed) expect(needs, `README names Node ${version}`).toContain(version as string);
    const named = [...needs.matchAll(/\d+(\.\d+\+)?/g)].map((m) => m[0]);
    expect(named.sort()).toEqual([...allowed].sort());
  });
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
    const blocks = runnableBlocks(md, "docs/x.md");
    expect(blocks).toHaveLength(1);
    expect(blocks[0]?.line).toBe(4);
    expect(blocks[0]?.file).toBe("docs/x.md");
    expect(curlCalls(blocks[0] as Block)).toEqual([
      { line: 5, expect: "2xx" },
      { line: 8, expect: "409" },
    ]);
  });

  it("refuses two curl calls on one line, and an unclosed block, naming the file", () => {
    expect(() => curlCalls({ file: "docs/x.md", line: 1, code: "curl a; curl b" })).toThrow(
      /^docs\/x\.md:2: one curl call per line/,
    );
    expect(() => runnableBlocks("```sh readme-test\necho", "docs/y.md")).toThrow(/^docs\/y\.md:1: .* never closed/);
  });

  it("reads the helper functions a block defines", () => {
    const block = {
      file: "docs/x.md",
      line: 1,
      code: ["# helpers", "idem() { echo 1; }", 'field() { node -e "x" "$1"; }', "echo idem() { no }"].join("\n"),
    };
    expect(helperDefinitions(block)).toEqual(
      new Map([
        ["idem", "idem() { echo 1; }"],
        ["field", 'field() { node -e "x" "$1"; }'],
      ]),
    );
  });
});
