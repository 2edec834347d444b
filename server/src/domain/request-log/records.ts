import type { BaseDoc } from "../../store/port.ts";
import { collection } from "../kernel/records.ts";
import type { AreaDocs, AreaStore, AreaTx } from "../kernel/store.ts";

/** One line of the request log (operation listRequestLog; the console shows it). Card numbers are masked. */
export interface RequestLogDoc extends BaseDoc {
  request_id: string;
  method: string;
  path: string;
  status: number;
  latency_ms: number;
  key_prefix: string | null;
  /** The key that made the request; absent on records written before it was kept. */
  key_id?: string | null;
  /** `console`: sent by the developer console for a signed-in key; absent (`api`) on older records. */
  source?: "api" | "console";
}

/** The status from which a request counts as failed (listRequestLog's `outcome`; its index, below). */
export const FAILED_FROM = 400;

export const requestLogCollections = {
  // The retention job deletes by age in both environments through the listing index (livemode,
  // created_at, id) every collection has; each index costs every request a write.
  // The request log by key, by method and by outcome read their page straight from an index, in the
  // listing order (listRequestLog, issue 36). The failed requests (status 400 or more, request-log.ts) are a
  // partial index of their own: the rare end of the log, which a walk of the listing index would reach
  // only after every success (7.9 times its empty-store time at 200,000 charges); `succeeded` is most of the
  // log and walks the listing index.
  request_log: collection<RequestLogDoc>([
    { fields: ["livemode", "key_id", "created_at", "id"] },
    { fields: ["livemode", "method", "created_at", "id"] },
    { fields: ["livemode", "created_at", "id"], where: { status: { $gte: FAILED_FROM } } },
  ]),
};

/** The store as the request-log area sees it: its own collections and the kernel's (kernel/store.ts). */
export type RequestLogStore = AreaStore<typeof requestLogCollections>;
export type RequestLogTx = AreaTx<typeof requestLogCollections>;
export type RequestLogDocs = AreaDocs<typeof requestLogCollections>;
