import type { Request, Response } from "express";
import type { Caller } from "../domain/kernel/caller.ts";
import type { IdempotencyScope } from "../domain/kernel/commit.ts";
import {
  isText,
  type OperationHandler,
  type OperationId,
  type PathParams,
  type QueryParams,
  type RequestBody,
} from "../domain/kernel/operations.ts";
import { isCsv, writeCsv } from "./csv.ts";
import { type EventStreams, isEventStream } from "./event-stream.ts";

// Express glue for the areas' handlers (domain/areas.ts createHandlers): the validator has already checked body,
// path and query against the contract; the handler's reply becomes the answer.

/** `streams`: where an operation that answers with an event stream writes it (event-stream.ts). */
export function toExpress<K extends OperationId>(handler: OperationHandler<K>, streams: EventStreams) {
  return async (req: Request, res: Response) => {
    const reply = await handler({
      body: req.body as RequestBody<K>,
      path: req.params as PathParams<K>,
      query: req.query as QueryParams<K>,
      caller: res.locals.caller as Caller,
      requestId: String(res.locals.requestId),
      ip: req.ip,
      header: (name) => req.get(name),
      idempotency: res.locals.idempotency as IdempotencyScope | undefined,
    });
    if (isEventStream(reply.body)) return streams.write(req, res, reply.status as number, reply.body);
    if (isCsv(reply.body)) return writeCsv(req, res, reply.status as number, reply.body);
    if (isText(reply.body))
      return res
        .status(reply.status as number)
        .type("text/plain")
        .send(reply.body.text);
    res.status(reply.status as number).json(reply.body);
  };
}
