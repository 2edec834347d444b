import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../support/process.ts";

// The documentation's links hold (docs/contributing.md "Runnable blocks in the README and the guides"):
// every relative link and image in the repository's Markdown names a file that exists, and every
// `#anchor` a heading of that file; every citation of a documentation section in the code,
// configuration and documents (`README "Quick start"`, `docs/operating.md 'Production'`) names a
// heading that exists. So moving or renaming a section fails here, naming each place that still
// points to the old one.

/** Folders never searched: dependencies, build output, and the frozen or derived contract copies. */
const SKIP = new Set(["node_modules", ".git", "dist", "generated", "released", "reports", ".stryker-tmp", "artifacts"]);
const TEXT = /\.(md|ts|mts|mjs|js|tsp|json|ya?ml|sh|html|css)$|^(Dockerfile|run|\.env\.example)$/;

/** The repository's text files, as paths from its root. */
function files(dir = ROOT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (SKIP.has(entry.name)) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return files(path);
    return TEXT.test(entry.name) && entry.name !== "package-lock.json" ? [relative(ROOT, path)] : [];
  });
}

/** GitHub's anchor for a heading: lower case, punctuation removed, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** A Markdown text without its fenced blocks (their lines left empty, so line numbers hold). */
function outsideFences(markdown: string): string[] {
  let fenced = false;
  return markdown.split("\n").map((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return "";
    }
    return fenced ? "" : line;
  });
}

/** A Markdown text's headings, as written (without the #s). */
export function headings(markdown: string): string[] {
  return outsideFences(markdown).flatMap((line) => /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line)?.[1] ?? []);
}

/** The anchors of a Markdown text's headings, numbered as GitHub numbers repeated ones. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const heading of headings(markdown)) {
    const base = slug(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    result.add(n === 0 ? base : `${base}-${n}`);
  }
  return result;
}

/** The relative links and images of a Markdown text, outside code, with their lines. */
export function relativeLinks(markdown: string): { line: number; target: string }[] {
  return outsideFences(markdown).flatMap((text, i) =>
    [...text.replace(/`[^`]*`/g, "``").matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
      .map((m) => m[1] ?? "")
      .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
      .map((target) => ({ line: i + 1, target })),
  );
}

/**
 * Citations of a documentation section: a document's name, then the section's heading in quotes,
 * also when a comment carries it over a line break (`README "Console and` / `// API reference"`).
 */
export function citations(text: string): { document: string; section: string }[] {
  const joined = text.replace(/[ \t]*\n[ \t]*(?:\/\/+|\*|#)?[ \t]*/g, " ");
  return [
    ...joined.matchAll(
      /\b(README(?:\.md)?|docs\/[\w-]+\.md|clients\/typescript\/README\.md),?\s+(["'])([^"'\n]{2,100}?)\2/g,
    ),
  ].map((m) => ({ document: m[1] === "README" ? "README.md" : (m[1] ?? ""), section: m[3] ?? "" }));
}

const read = (path: string) => readFileSync(resolve(ROOT, path), "utf8");

describe("the documentation's links", () => {
  const all = files();
  const markdown = all.filter((f) => f.endsWith(".md"));

  it("find the documents", () => {
    expect(markdown).toEqual(expect.arrayContaining(["README.md", "docs/README.md", "clients/typescript/README.md"]));
  });

  it("name files that exist, and headings that exist in them", () => {
    const broken: string[] = [];
    for (const file of markdown) {
      for (const { line, target } of relativeLinks(read(file))) {
        const [path = "", anchor] = target.split("#");
        const resolved = path === "" ? file : relative(ROOT, resolve(ROOT, dirname(file), decodeURI(path)));
        let text: string;
        try {
          text = read(resolved);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === "EISDIR" && anchor === undefined) continue;
          broken.push(`${file}:${line}: ${target} (no such file)`);
          continue;
        }
        if (anchor !== undefined && !anchors(text).has(anchor)) {
          broken.push(`${file}:${line}: ${target} (${resolved} has no heading with that anchor)`);
        }
      }
    }
    expect(broken, broken.join("\n")).toEqual([]);
  });

  it("cite, from code, configuration and documents, sections that exist", () => {
    const headingsOf = new Map<string, Set<string>>();
    const broken: string[] = [];
    let checked = 0;
    // This file's own examples are citation-shaped on purpose; in Markdown, code spans are examples too.
    for (const file of all.filter((f) => f !== "test/readme/links.test.ts")) {
      const text = file.endsWith(".md") ? read(file).replace(/`[^`\n]*`/g, "``") : read(file);
      for (const { document, section } of citations(text)) {
        if (!headingsOf.has(document)) {
          const titles = new Set<string>();
          try {
            for (const h of headings(read(document))) {
              titles.add(h);
              titles.add(h.replace(/`/g, ""));
              titles.add(h.replace(/\s*\([^)]*\)$/, "")); // "Mutation testing (how strong ...)" as "Mutation testing"
            }
          } catch {
            // no such document: every citation of it is broken
          }
          headingsOf.set(document, titles);
        }
        checked++;
        if (!headingsOf.get(document)?.has(section)) broken.push(`${file}: ${document} "${section}"`);
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(broken, `citations of sections that do not exist:\n${broken.join("\n")}`).toEqual([]);
  });
});

describe("the link checks' own parsing", () => {
  it("makes GitHub's anchors", () => {
    expect(slug("Verifying: with the raw body")).toBe("verifying-with-the-raw-body");
    expect(slug("One server process per core (`WORKERS`)")).toBe("one-server-process-per-core-workers");
    expect(slug("Charges, refunds, local payments and balances")).toBe("charges-refunds-local-payments-and-balances");
    expect([...anchors("# A\n```\n# not a heading\n```\n## A\n")]).toEqual(["a", "a-1"]);
  });

  it("finds relative links outside code, and citations across comment lines", () => {
    const md = "See [a](a.md#x), ![b](img/b.png), [c](https://c.example) and `[d](d.md)`.\n```\n[e](e.md)\n```";
    expect(relativeLinks(md)).toEqual([
      { line: 1, target: "a.md#x" },
      { line: 1, target: "img/b.png" },
    ]);
    const code =
      "// The pages (README \"Console and\n// API reference\"), and docs/operating.md 'Production'; README's table";
    expect(citations(code)).toEqual([
      { document: "README.md", section: "Console and API reference" },
      { document: "docs/operating.md", section: "Production" },
    ]);
  });
});
