import type { components } from "@payments/client";
import { WEBHOOK_EVENT_TYPES } from "@payments/contract/operations";
import { need } from "../api.ts";
import { type Ctx, link, type PageDef, pageHeader, type Route, time } from "../app.ts";
import { listView } from "../list.ts";
import { details, h, jsonBlock } from "../ui.ts";
import { deliveriesView } from "./webhooks.ts";

// Events (scope `webhooks`): the list, filtered by type; one event's payload and its deliveries to
// every endpoint (the attempt log per event), with redelivery.

type Event = components["schemas"]["Event"];

/** The object an event is about, as a console link when there is one. */
function subject(e: Event): HTMLElement | string {
  const fields = e as unknown as Record<string, unknown>;
  if (typeof fields.tx_id === "string") return link(`charges/${fields.tx_id}`, fields.tx_id);
  if (typeof fields.merchant_id === "string") return link(`merchants/${fields.merchant_id}`, fields.merchant_id);
  if (typeof fields.key_id === "string") return h("code", null, fields.key_id);
  if (typeof fields.endpoint_id === "string") return link(`webhooks/${fields.endpoint_id}`, fields.endpoint_id);
  return "";
}

async function eventDetail(ctx: Ctx, route: Route, id: string): Promise<HTMLElement> {
  const event = need(await ctx.api.GET("/v1/events/{id}", { params: { path: { id } } }));
  return h(
    "div",
    null,
    h("p", { class: "crumbs" }, link("events", "Events"), " / ", h("code", null, event.id)),
    pageHeader(event.type),
    details([
      ["Id", h("code", null, event.id)],
      ["About", subject(event)],
      ["Created", time(event.created_at)],
    ]),
    h("h2", null, "Payload"),
    jsonBlock(event, "Event payload"),
    h("h2", null, "Deliveries"),
    ctx.can("listEventDeliveries")
      ? deliveriesView(
          ctx,
          route,
          `events/${id}`,
          async (q) => need(await ctx.api.GET("/v1/events/{id}/deliveries", { params: { path: { id }, query: q } })),
          "endpoint",
        )
      : null,
  );
}

export const eventsPage: PageDef = {
  path: "events",
  title: "Events",
  needs: ["listEvents"],
  render(ctx: Ctx, route: Route) {
    const id = route.segments[1];
    if (id) return eventDetail(ctx, route, id);
    return h(
      "div",
      null,
      pageHeader("Events"),
      listView<Event>({
        caption: "Events",
        query: route.query,
        navigate: (q) => ctx.go("events", q),
        empty: "No events.",
        filters: [{ name: "type", label: "Type", options: WEBHOOK_EVENT_TYPES.map((t) => [t, t]) }],
        load: async (q) => need(await ctx.api.GET("/v1/events", { params: { query: q as never } })),
        columns: [
          { header: "Event", rowHeader: true, cell: (e) => link(`events/${e.id}`, e.id) },
          { header: "Type", cell: (e) => h("code", null, e.type) },
          { header: "About", cell: subject },
          { header: "Created", cell: (e) => time(e.created_at) },
        ],
      }),
    );
  },
};
