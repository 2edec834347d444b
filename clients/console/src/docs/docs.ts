// The API reference (/docs): Redoc, from its standalone bundle served beside this file, rendering
// /docs/openapi.json, the very document the server validates requests against (server/src/http/pages.ts).

interface RedocGlobal {
  init(
    specUrl: string,
    options: Record<string, unknown>,
    element: HTMLElement,
    callback?: (error?: unknown) => void,
  ): void;
}

const root = document.getElementById("reference");
const redoc = (window as unknown as { Redoc?: RedocGlobal }).Redoc;

if (root && redoc) {
  redoc.init(
    "/docs/openapi.json",
    {
      // The document's own order: resources as the contract lists them, then the webhooks.
      expandResponses: "200,201,202",
      requiredPropsFirst: true,
      jsonSampleExpandLevel: 3,
      hideDownloadButton: false,
      nativeScrollbars: true,
      scrollYOffset: ".docs-bar",
      theme: {
        colors: { primary: { main: "#1f3a93" } },
        typography: {
          fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
          headings: { fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif" },
          code: { fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace" },
        },
        sidebar: { width: "280px" },
      },
    },
    root,
    (error) => {
      root.removeAttribute("aria-busy");
      if (error) {
        const p = document.createElement("p");
        p.className = "error";
        p.textContent = "The reference could not be rendered; the document is at /docs/openapi.json.";
        root.replaceChildren(p);
      } else {
        document.body.dataset.rendered = "true";
      }
    },
  );
}
