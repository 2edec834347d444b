import type { components, ServiceKey } from "@payments/client";
import { need } from "../api.ts";
import { type Ctx, type PageDef, pageHeader, type Route, serverTime } from "../app.ts";
import { listView } from "../list.ts";
import { badge, button, h } from "../ui.ts";

// The request log (GET /v1/request_log, scope `*`): the latest requests made with this environment's
// keys, the console's own included. The server masks card numbers before it stores a path.

type Entry = components["schemas"]["RequestLogEntry"];

export const requestLogPage: PageDef = {
  path: "requests",
  title: "Request log",
  needs: ["listRequestLog"],
  async render(ctx: Ctx, route: Route) {
    // The key filter offers the environment's keys by name (same scope as the log itself).
    const keys: ServiceKey[] = ctx.can("listServiceKeys")
      ? need(await ctx.api.GET("/v1/service_keys", { params: { query: { limit: 100 } } })).data
      : [];
    return h(
      "div",
      null,
      pageHeader(
        "Request log",
        button("Refresh", () => ctx.refresh()),
      ),
      h(
        "p",
        { class: "muted" },
        "Requests made with a valid key, newest first; card numbers are masked. Entries appear within a second.",
      ),
      listView<Entry>({
        caption: "Requests",
        query: route.query,
        navigate: (q) => ctx.go("requests", q),
        empty: "No requests match.",
        pageSize: 50,
        filters: [
          { name: "key_id", label: "Key", options: keys.map((k) => [k.id, `${k.name} (${k.prefix}…)`]) },
          { name: "method", label: "Method", options: ["GET", "POST", "PATCH", "DELETE"].map((m) => [m, m]) },
          {
            name: "outcome",
            label: "Outcome",
            options: [
              ["succeeded", "succeeded (below 400)"],
              ["failed", "failed (400 and above)"],
            ],
          },
        ],
        load: async (q) => need(await ctx.api.GET("/v1/request_log", { params: { query: q as never } })),
        columns: [
          { header: "Time", cell: (e) => serverTime(e.created_at) },
          { header: "Method", cell: (e) => h("code", null, e.method) },
          { header: "Path", rowHeader: true, cell: (e) => h("code", { class: "path" }, e.path) },
          {
            header: "Status",
            cell: (e) => badge(String(e.status), e.status < 400 ? "ok" : e.status < 500 ? "warn" : "bad"),
          },
          { header: "Latency", cell: (e) => `${e.latency_ms.toFixed(1)} ms` },
          {
            header: "Key",
            cell: (e) => [
              h("code", null, `${e.key_prefix}…`),
              e.source === "console" ? h("span", { class: "muted" }, " via console") : null,
            ],
          },
          { header: "Request id", cell: (e) => h("code", null, e.id) },
        ],
      }),
    );
  },
};
