import type { components } from "@payments/client";
import { WEBHOOK_EVENT_TYPES } from "@payments/contract/operations";
import { need } from "../api.ts";
import { type Ctx, link, type PageDef, pageHeader, type Route, serverTime, time } from "../app.ts";
import { listView } from "../list.ts";
import { announce, badge, button, type Child, confirmDialog, details, field, formDialog, h, select } from "../ui.ts";

// Webhook endpoints and their attempt log (scope `webhooks`): list, create (the signing secret shown
// once), edit the events, enable or disable, rotate the secret, send a test event, recover failed
// deliveries, delete; each delivery's attempts, and redelivery; a sandbox endpoint's chaos settings
// (WebhookChaos: docs/testing-your-integration.md "Webhook chaos").

type Endpoint = components["schemas"]["WebhookEndpoint"];
type Delivery = components["schemas"]["WebhookDelivery"];

const GRACE_PERIODS: [string, string][] = [
  ["0", "None: the old secret stops signing now"],
  ["3600", "1 hour"],
  ["86400", "24 hours"],
  ["604800", "7 days"],
];

function endpointStatus(e: Endpoint): HTMLElement {
  if (e.status === "enabled") return badge(e.failing_since ? "failing" : "enabled", e.failing_since ? "warn" : "ok");
  return badge(`disabled${e.disabled_reason ? ` (${e.disabled_reason})` : ""}`, "bad");
}

export function deliveryStatus(d: Delivery): HTMLElement {
  return badge(d.status, d.status === "succeeded" ? "ok" : d.status === "failed" ? "bad" : "info");
}

/** Checkboxes for the event types an endpoint receives (the body's `enabled_events`). */
function eventChoices(selected: readonly string[]): { el: HTMLElement; values(): string[] } {
  const all = ["*", ...WEBHOOK_EVENT_TYPES];
  const boxes = all.map((type) =>
    h(
      "label",
      { class: "check" },
      h("input", { type: "checkbox", name: "enabled_events", value: type, checked: selected.includes(type) }),
      type === "*" ? "* (every type, including ones added later)" : type,
    ),
  );
  return {
    el: h(
      "fieldset",
      { "data-param": "enabled_events" },
      h("legend", null, "Events to receive"),
      h("div", { class: "checks columns" }, boxes),
    ),
    values: () =>
      boxes
        .map((b) => b.querySelector("input"))
        .filter((i): i is HTMLInputElement => i?.checked === true)
        .map((i) => i.value),
  };
}

/** The description field of an endpoint's create and edit dialogs. */
const descriptionInput = (value = "") =>
  h("input", { name: "description", maxlength: 500, value, autocomplete: "off", "data-param": "description" });

function createEndpoint(ctx: Ctx): void {
  const url = h("input", {
    name: "url",
    type: "url",
    required: true,
    placeholder: "https://example.com/webhooks",
    autocomplete: "off",
    "data-param": "url",
  });
  const description = descriptionInput();
  const events = eventChoices([]);
  formDialog("Add a webhook endpoint", {
    wide: true,
    body: [
      field(
        "URL",
        url,
        ctx.session.key.livemode
          ? "Production endpoints must be https and public."
          : "The sandbox also accepts http and localhost.",
      ),
      field("Description (optional)", description),
      events.el,
    ],
    submitLabel: "Add endpoint",
    async submit(close) {
      const chosen = events.values();
      if (chosen.length === 0) return "Choose at least one event type.";
      const created = need(
        await ctx.api.POST("/v1/webhook_endpoints", {
          body: {
            url: url.value.trim(),
            enabled_events: chosen as Endpoint["enabled_events"],
            ...(description.value.trim() ? { description: description.value.trim() } : {}),
          },
        }),
      );
      close();
      await ctx.showSecret(
        "Endpoint added: its signing secret",
        created.secret,
        "Verify every delivery's X-Service-Signature with it.",
      );
      ctx.go(`webhooks/${created.id}`);
      return undefined;
    },
  });
}

function editEndpoint(ctx: Ctx, endpoint: Endpoint): void {
  const description = descriptionInput(endpoint.description ?? "");
  const enabled = select(
    "status",
    [
      ["enabled", "Enabled"],
      ["disabled", "Disabled"],
    ],
    endpoint.status,
  );
  enabled.dataset.param = "disabled";
  const events = eventChoices(endpoint.enabled_events);
  formDialog("Edit the endpoint", {
    wide: true,
    body: [field("Description", description), field("Deliveries", enabled), events.el],
    submitLabel: "Save",
    async submit(close) {
      const chosen = events.values();
      if (chosen.length === 0) return "Choose at least one event type.";
      need(
        await ctx.api.PATCH("/v1/webhook_endpoints/{id}", {
          params: { path: { id: endpoint.id } },
          body: {
            enabled_events: chosen as Endpoint["enabled_events"],
            description: description.value.trim() || null,
            disabled: enabled.value === "disabled",
          },
        }),
      );
      close();
      announce("Endpoint saved");
      ctx.refresh();
      return undefined;
    },
  });
}

/** A sandbox endpoint's chaos settings (WebhookChaos), in words, or "none". */
export function chaosSummary(chaos: Endpoint["chaos"]): string {
  if (!chaos) return "none";
  const parts = [
    chaos.duplicate ? "each acknowledged delivery sent twice" : null,
    chaos.reorder ? "events made together sent newest first" : null,
    chaos.delay_seconds > 0 ? `first attempt delayed ${chaos.delay_seconds} s` : null,
    chaos.fail_first_attempts > 0 ? `first ${chaos.fail_first_attempts} attempt(s) fail unsent` : null,
  ];
  return parts.filter((p) => p !== null).join("; ") || "none";
}

/** The chaos settings of a sandbox endpoint (PATCH `chaos`; "Turn off" sends `null`). */
function editChaos(ctx: Ctx, endpoint: Endpoint): void {
  const current = endpoint.chaos;
  const check = (name: string, checked: boolean, label: string) => {
    const input = h("input", { type: "checkbox", name, checked, "data-param": `chaos.${name}` });
    return { input, el: h("label", { class: "check" }, input, label) };
  };
  const duplicate = check("duplicate", current?.duplicate ?? false, "Send each acknowledged delivery twice");
  const reorder = check("reorder", current?.reorder ?? false, "Send the events of one request newest first");
  const number = (name: string, value: number, max: number) =>
    h("input", {
      name,
      type: "number",
      min: 0,
      max,
      step: 1,
      required: true,
      value: String(value),
      "data-param": `chaos.${name}`,
    });
  const delay = number("delay_seconds", current?.delay_seconds ?? 0, 3600);
  const failFirst = number("fail_first_attempts", current?.fail_first_attempts ?? 0, 10);
  const save = (chaos: Endpoint["chaos"]) => async (close: () => void) => {
    need(await ctx.api.PATCH("/v1/webhook_endpoints/{id}", { params: { path: { id: endpoint.id } }, body: { chaos } }));
    close();
    announce(chaos ? "Chaos settings saved" : "Chaos turned off");
    ctx.refresh();
    return undefined;
  };
  formDialog("Webhook chaos (sandbox)", {
    body: [
      h(
        "p",
        null,
        "Make this endpoint's deliveries misbehave on purpose, to see what your receiver does with them. Production endpoints never do.",
      ),
      h("fieldset", null, h("legend", null, "Deliveries"), h("div", { class: "checks" }, duplicate.el, reorder.el)),
      field("Delay the first attempt (seconds, sandbox clock)", delay, "0 to 3600"),
      field("Fail the first attempts unsent", failFirst, "0 to 10; the retry schedule brings the next"),
    ],
    submitLabel: "Save",
    other: current ? { label: "Turn off", tone: "danger", run: save(null) } : undefined,
    submit: (close) =>
      save({
        duplicate: duplicate.input.checked,
        reorder: reorder.input.checked,
        delay_seconds: Number(delay.value),
        fail_first_attempts: Number(failFirst.value),
      })(close),
  });
}

function rotateSecret(ctx: Ctx, endpoint: Endpoint): void {
  const grace = select("grace_period_seconds", GRACE_PERIODS, "86400");
  formDialog("Rotate the signing secret", {
    body: [
      h("p", null, "During the grace period every delivery carries two signatures, the new secret's first."),
      field("Grace period for the old secret", grace),
    ],
    submitLabel: "Rotate secret",
    async submit(close) {
      const rotated = need(
        await ctx.api.POST("/v1/webhook_endpoints/{id}/rotate_secret", {
          params: { path: { id: endpoint.id } },
          body: { grace_period_seconds: Number(grace.value) },
        }),
      );
      close();
      await ctx.showSecret("The endpoint's new signing secret", rotated.secret, "Deploy it to your receiver.");
      ctx.refresh();
      return undefined;
    },
  });
}

function recover(ctx: Ctx, endpoint: Endpoint): void {
  const since = h("input", { name: "since", type: "datetime-local", required: true });
  const dayAgo = new Date(Date.now() - 86_400_000);
  since.value = new Date(dayAgo.getTime() - dayAgo.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  formDialog("Retry failed deliveries", {
    body: [
      h("p", null, "Every delivery to this endpoint created since then that ended failed gets one more attempt."),
      field("Since (your local time)", since),
    ],
    submitLabel: "Retry them",
    async submit(close) {
      const result = need(
        await ctx.api.POST("/v1/webhook_endpoints/{id}/recover", {
          params: { path: { id: endpoint.id } },
          body: { since: new Date(since.value).toISOString() },
        }),
      );
      close();
      announce(`${result.scheduled} deliveries scheduled`);
      ctx.refresh();
      return undefined;
    },
  });
}

/** A delivery's attempts, as a table. */
function attemptsTable(d: Delivery): Child {
  if (d.attempts.length === 0) return h("p", { class: "muted" }, "No attempt yet.");
  return h(
    "table",
    { class: "compact" },
    h("caption", { class: "visually-hidden" }, `Attempts of ${d.id}`),
    h(
      "thead",
      null,
      h(
        "tr",
        null,
        ["#", "When", "Trigger", "Result", "Latency", "Response"].map((c) => h("th", { scope: "col" }, c)),
      ),
    ),
    h(
      "tbody",
      null,
      d.attempts.map((a) =>
        h(
          "tr",
          null,
          h("td", null, String(a.number)),
          h("td", null, time(a.attempted_at)),
          h("td", null, a.trigger),
          h(
            "td",
            null,
            a.succeeded
              ? badge(`${a.status_code}`, "ok")
              : badge(a.status_code ? String(a.status_code) : (a.error ?? "failed"), "bad"),
            a.error_message ? ` ${a.error_message}` : "",
          ),
          h("td", { class: "nowrap" }, `${a.latency_ms} ms`),
          h("td", null, a.response_body ? h("code", { class: "excerpt" }, a.response_body.slice(0, 200)) : ""),
        ),
      ),
    ),
  );
}

/** The attempt log: deliveries with their attempts and a redeliver action. Shared by endpoints and events. */
export function deliveriesView(
  ctx: Ctx,
  route: Route,
  routePath: string,
  load: (q: Record<string, string>) => Promise<{ data: Delivery[]; has_more: boolean }>,
  show: "event" | "endpoint",
): HTMLElement {
  return listView<Delivery>({
    caption: "Deliveries",
    query: route.query,
    navigate: (q) => ctx.go(routePath, q),
    empty: "No deliveries.",
    filters: [
      {
        name: "status",
        label: "Status",
        options: [
          ["pending", "pending"],
          ["succeeded", "succeeded"],
          ["failed", "failed"],
        ],
      },
    ],
    load,
    columns: [
      {
        header: show === "event" ? "Event" : "Endpoint",
        rowHeader: true,
        cell: (d) =>
          show === "event"
            ? [link(`events/${d.event_id}`, d.event_id), h("br"), h("code", null, d.event_type)]
            : link(`webhooks/${d.endpoint_id}`, d.endpoint_id),
      },
      { header: "Status", cell: deliveryStatus },
      { header: "Attempts", cell: (d) => String(d.attempt_count) },
      { header: "Next attempt", cell: (d) => time(d.next_attempt_at, "none") },
      {
        header: "Actions",
        cell: (d) =>
          ctx.can("redeliverEvent")
            ? h(
                "button",
                {
                  type: "button",
                  class: "btn",
                  "aria-label": `Redeliver ${d.event_type} to ${d.endpoint_id}`,
                  onclick: async () => {
                    try {
                      need(
                        await ctx.api.POST("/v1/events/{id}/redeliver", {
                          params: { path: { id: d.event_id } },
                          body: { endpoint_id: d.endpoint_id },
                        }),
                      );
                      announce("Redelivery scheduled");
                      ctx.refresh();
                    } catch (error) {
                      announce(error instanceof Error ? error.message : String(error));
                    }
                  },
                },
                "Redeliver",
              )
            : null,
      },
    ],
    detail: { header: "Log", label: (d) => `Attempts (${d.attempt_count})`, content: attemptsTable },
  });
}

async function endpointDetail(ctx: Ctx, route: Route, id: string): Promise<HTMLElement> {
  const endpoint = need(await ctx.api.GET("/v1/webhook_endpoints/{id}", { params: { path: { id } } }));
  const actions = h(
    "div",
    { class: "toolbar" },
    ctx.can("updateWebhookEndpoint") ? button("Edit events and status", () => editEndpoint(ctx, endpoint)) : null,
    ctx.can("rotateWebhookEndpointSecret") ? button("Rotate secret", () => rotateSecret(ctx, endpoint)) : null,
    !endpoint.livemode && ctx.can("updateWebhookEndpoint")
      ? button("Chaos settings", () => editChaos(ctx, endpoint))
      : null,
    ctx.can("testWebhookEndpoint")
      ? button("Send test event", async () => {
          try {
            need(await ctx.api.POST("/v1/webhook_endpoints/{id}/test", { params: { path: { id } } }));
            announce("Test event sent");
            ctx.refresh();
          } catch (error) {
            announce(error instanceof Error ? error.message : String(error));
          }
        })
      : null,
    ctx.can("recoverWebhookEndpoint") ? button("Retry failed deliveries", () => recover(ctx, endpoint)) : null,
    ctx.can("deleteWebhookEndpoint")
      ? button(
          "Delete endpoint",
          async () => {
            if (
              !(await confirmDialog(
                "Delete this endpoint?",
                h("p", null, `Nothing more is sent to ${endpoint.url}.`),
                "Delete endpoint",
              ))
            )
              return;
            try {
              need(await ctx.api.DELETE("/v1/webhook_endpoints/{id}", { params: { path: { id } } }));
              announce("Endpoint deleted");
              ctx.go("webhooks");
            } catch (error) {
              announce(error instanceof Error ? error.message : String(error));
            }
          },
          "danger",
        )
      : null,
  );
  return h(
    "div",
    null,
    h("p", { class: "crumbs" }, link("webhooks", "Webhook endpoints"), " / ", h("code", null, endpoint.id)),
    pageHeader(endpoint.url),
    actions,
    details([
      ["Status", endpointStatus(endpoint)],
      ["Description", endpoint.description ?? h("span", { class: "muted" }, "none")],
      [
        "Events",
        h(
          "span",
          { class: "scopes" },
          endpoint.enabled_events.map((e) => h("code", null, e)),
        ),
      ],
      ["Failing since", time(endpoint.failing_since, "not failing")],
      ["Old secret signs until", serverTime(endpoint.previous_secret_expires_at, "no old secret")],
      ...(endpoint.livemode ? [] : [["Chaos (sandbox)", chaosSummary(endpoint.chaos)] as [string, Child]]),
      ["Created", time(endpoint.created_at)],
    ]),
    h("h2", null, "Attempt log"),
    ctx.can("listWebhookEndpointDeliveries")
      ? deliveriesView(
          ctx,
          route,
          `webhooks/${id}`,
          async (q) =>
            need(await ctx.api.GET("/v1/webhook_endpoints/{id}/deliveries", { params: { path: { id }, query: q } })),
          "event",
        )
      : null,
  );
}

export const webhooksPage: PageDef = {
  path: "webhooks",
  title: "Webhook endpoints",
  needs: ["listWebhookEndpoints"],
  render(ctx: Ctx, route: Route) {
    const id = route.segments[1];
    if (id) return endpointDetail(ctx, route, id);
    return h(
      "div",
      null,
      pageHeader(
        "Webhook endpoints",
        ctx.can("createWebhookEndpoint") ? button("Add endpoint", () => createEndpoint(ctx), "primary") : null,
      ),
      listView<Endpoint>({
        caption: "Webhook endpoints",
        query: route.query,
        navigate: (q) => ctx.go("webhooks", q),
        empty: "No endpoints yet.",
        load: async (q) => need(await ctx.api.GET("/v1/webhook_endpoints", { params: { query: q } })),
        columns: [
          { header: "URL", rowHeader: true, cell: (e) => h("a", { href: `#/webhooks/${e.id}`, class: "path" }, e.url) },
          { header: "Description", cell: (e) => e.description ?? "" },
          {
            header: "Events",
            cell: (e) =>
              h(
                "span",
                { class: "scopes" },
                e.enabled_events.map((t) => h("code", null, t)),
              ),
          },
          { header: "Status", cell: endpointStatus },
          { header: "Created", cell: (e) => time(e.created_at) },
        ],
      }),
    );
  },
};
