import type { Request, Response } from "express";
import {
  isText,
  type OperationHandler,
  type OperationId,
  type OperationInput,
  type PathParams,
  type QueryParams,
  type RequestBody,
} from "../domain/kernel/operations.ts";
import { isCsv, writeCsv } from "./csv.ts";
import { type EventStreams, isEventStream } from "./event-stream.ts";
import { authenticatedCaller, locals } from "./locals.ts";

// Express glue for the areas' handlers (domain/areas.ts createHandlers): the validator has already checked body,
// path and query against the contract; the handler's reply becomes the answer.

/**
 * `op`: the operation, whose `public` says whether its handler has a caller (kernel/operations.ts
 * OperationInput). `streams`: where an operation that answers with an event stream writes it (event-stream.ts).
 */
export function toExpress<K extends OperationId>(
  handler: OperationHandler<K>,
  op: { public: boolean },
  streams: EventStreams,
) {
  return async (req: Request, res: Response) => {
    const parts = {
      // The casts: express-openapi-validator has checked body, path and query against operation K's contract.
      body: req.body as RequestBody<K>,
      path: req.params as PathParams<K>, // cast: as above
      query: req.query as QueryParams<K>, // cast: as above
      requestId: String(locals(res).requestId),
      ip: req.ip,
      header: (name: string) => req.get(name),
      idempotency: locals(res).idempotency,
    };
    // A public operation (no security in the contract: a payment page, an acquirer's notification) has no
    // caller, even when the request carries a key; every other one passed auth.ts's security handler,
    // which refuses a request without one.
    const input = op.public ? parts : { ...parts, caller: authenticatedCaller(res) };
    // That is OperationInput<K>'s public or authenticated branch, chosen by the contract's `public` for
    // this operation; tsc cannot pick the branch of a conditional type for a generic K, hence the cast.
    const reply = await handler(input as OperationInput<K>);
    if (isEventStream(reply.body)) return streams.write(req, res, Number(reply.status), reply.body);
    if (isCsv(reply.body)) return writeCsv(req, res, Number(reply.status), reply.body);
    if (isText(reply.body)) return res.status(Number(reply.status)).type("text/plain").send(reply.body.text);
    res.status(Number(reply.status)).json(reply.body);
  };
}
