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

/** The object an event is about: a console link when the key may open it, its id otherwise. */
function subject(ctx: Ctx, e: Event): HTMLElement | string {
  const fields = e as unknown as Record<string, unknown>;
  const to = (path: string, id: unknown, allowed: boolean) =>
    typeof id === "string" ? (allowed ? link(`${path}/${id}`, id) : h("code", null, id)) : null;
  return (
    to("payment-links", fields.payment_link_id, ctx.can("getPaymentLink")) ??
    to("charges", fields.tx_id, ctx.can("getCharge")) ??
    to("cashouts", fields.cashout_id, ctx.can("getCashout")) ??
    to("merchants", fields.merchant_id, ctx.can("getMerchant")) ??
    to("keys", fields.key_id, false) ??
    to("webhooks", fields.endpoint_id, ctx.can("getWebhookEndpoint")) ??
    ""
  );
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
      ["About", subject(ctx, event)],
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
          { header: "About", cell: (e) => subject(ctx, e) },
          { header: "Created", cell: (e) => time(e.created_at) },
        ],
      }),
    );
  },
};
