import type { Request, Response } from "express";
import type { Caller } from "../domain/kernel/caller.ts";
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
import { locals } from "./locals.ts";

// Express glue for the areas' handlers (domain/areas.ts createHandlers): the validator has already checked body,
// path and query against the contract; the handler's reply becomes the answer.

/** `streams`: where an operation that answers with an event stream writes it (event-stream.ts). */
export function toExpress<K extends OperationId>(handler: OperationHandler<K>, streams: EventStreams) {
  return async (req: Request, res: Response) => {
    const reply = await handler({
      // The casts: express-openapi-validator has checked body, path and query against operation K's contract.
      body: req.body as RequestBody<K>,
      path: req.params as PathParams<K>, // cast: as above
      query: req.query as QueryParams<K>, // cast: as above
      // A public operation (no security in the contract: a payment page, an acquirer's notification) has
      // no caller and its handler reads none; every other one ran auth.ts, which set one: hence the cast.
      caller: locals(res).caller as Caller,
      requestId: String(locals(res).requestId),
      ip: req.ip,
      header: (name) => req.get(name),
      idempotency: locals(res).idempotency,
    });
    if (isEventStream(reply.body)) return streams.write(req, res, Number(reply.status), reply.body);
    if (isCsv(reply.body)) return writeCsv(req, res, Number(reply.status), reply.body);
    if (isText(reply.body)) return res.status(Number(reply.status)).type("text/plain").send(reply.body.text);
    res.status(Number(reply.status)).json(reply.body);
  };
}
