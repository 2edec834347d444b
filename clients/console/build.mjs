// `npm run build -w @payments/console`: the pages the server serves, into dist/ (docs/console.md "Console and
// API reference"). esbuild bundles each page's TypeScript and CSS (the console bundles the typed
// client and the generated operation table, so it knows which scope each operation needs); the HTML
// and the favicon are copied; the API reference gets Redoc's standalone bundle from node_modules.
// Nothing is loaded from another host at run time. `npm start` (ensureBuilt) runs it when dist/ is
// missing or older than its sources; the server's production build copies dist/ into
// server/dist/public.
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, "dist");
const require = createRequire(import.meta.url);

export async function buildPages({ quiet = false } = {}) {
  rmSync(dist, { recursive: true, force: true });
  for (const page of ["console", "docs"]) mkdirSync(join(dist, page, "assets"), { recursive: true });
  await build({
    absWorkingDir: here,
    entryPoints: {
      "console/assets/console": "src/console/main.ts",
      "console/assets/console-style": "src/console/console.css",
      "docs/assets/docs": "src/docs/docs.ts",
      "docs/assets/docs-style": "src/docs/docs.css",
      "docs/assets/errors": "src/docs/errors.css",
    },
    outdir: dist,
    bundle: true,
    format: "iife",
    platform: "browser",
    target: ["chrome120", "firefox120", "safari17"],
    // The client resolves to its TypeScript sources, as in the repository's own tests.
    conditions: ["@payments/source"],
    minify: true,
    sourcemap: "linked",
    legalComments: "linked",
    logLevel: quiet ? "error" : "warning",
  });
  const copy = (from, to) => copyFileSync(join(here, from), join(dist, to));
  copy("src/console/index.html", "console/index.html");
  copy("src/docs/index.html", "docs/index.html");
  copy("src/favicon.svg", "console/assets/favicon.svg");
  copy("src/favicon.svg", "docs/assets/favicon.svg");
  const redoc = dirname(require.resolve("redoc/package.json"));
  // Redoc's sidebar footer shows Redocly's logo from their CDN; the reference loads nothing from
  // another host (and its CSP would refuse it), so the image source becomes an empty data: URL, on
  // which Redoc's own error handler hides the image. The build fails if the bundle changes shape.
  const bundle = readFileSync(join(redoc, "bundles/redoc.standalone.js"), "utf8");
  const LOGO = 'src:"https://cdn.redoc.ly/redoc/logo-mini.svg"';
  if (bundle.split(LOGO).length !== 2)
    throw new Error("redoc.standalone.js no longer loads its logo as expected: review build.mjs");
  if (
    /["'`]https?:\/\/(?!redocly\.com\/redoc\/)[^"'`\s]*\.(?:js|css|svg|png|woff2?)["'`]/.test(bundle.replace(LOGO, ""))
  ) {
    throw new Error("redoc.standalone.js names another remote asset: review build.mjs");
  }
  writeFileSync(join(dist, "docs/assets/redoc.standalone.js"), bundle.replace(LOGO, 'src:"data:,"'));
  copyFileSync(
    join(redoc, "bundles/redoc.standalone.js.LICENSE.txt"),
    join(dist, "docs/assets/redoc.standalone.js.LICENSE.txt"),
  );
  copyFileSync(join(redoc, "LICENSE"), join(dist, "docs/assets/REDOC-LICENSE.txt"));
  writeFileSync(join(dist, ".built"), `${new Date().toISOString()}\n`);
  if (!quiet) console.log(`built ${dist}: console/ (the developer console), docs/ (the API reference)`);
  return dist;
}

/** The newest modification time among the files a build reads (this workspace, the client, the contract). */
function newestSource() {
  let newest = 0;
  const visit = (path) => {
    if (!existsSync(path)) return;
    const stat = statSync(path);
    if (stat.isDirectory()) {
      for (const name of readdirSync(path)) if (name !== "node_modules" && name !== "dist") visit(join(path, name));
    } else newest = Math.max(newest, stat.mtimeMs);
  };
  for (const path of ["src", "build.mjs", "package.json", "../typescript/src", "../../generated"])
    visit(join(here, path));
  visit(require.resolve("redoc/package.json"));
  return newest;
}

/**
 * Builds unless dist/ is newer than every source. Safe to call from several processes at once (test
 * workers, two `npm start`s): a lock directory lets one build while the others wait, then find it done.
 */
export async function ensureBuilt({ quiet = true } = {}) {
  const stamp = join(dist, ".built");
  const fresh = () => existsSync(stamp) && statSync(stamp).mtimeMs >= newestSource();
  if (fresh()) return dist;
  const lock = join(here, ".build-lock");
  const started = Date.now();
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // A lock older than a minute is left over from a build that died.
      if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > 60_000)
        rmSync(lock, { recursive: true, force: true });
      if (Date.now() - started > 120_000) throw new Error(`waited two minutes for ${lock}; remove it if no build runs`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    if (!fresh()) await buildPages({ quiet });
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
  return dist;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildPages();
