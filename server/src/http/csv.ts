import { once } from "node:events";
import type { Request, Response } from "express";
import type { CsvBody } from "../domain/kernel/operations.ts";
import { isRecord } from "../guards.ts";

// The transport of a CSV answer (listBalanceTransactions with `Accept: text/csv`, the contract's
// BalanceTransactionCsv): the domain's lines (kernel/operations.ts CsvBody) written as they come, waiting
// for the socket to drain whenever its buffer is full, so memory stays bounded however long the list.
// The response validator sees only res.json answers: a CSV goes out as the contract's string, unvalidated.

export function isCsv(body: unknown): body is CsvBody {
  return isRecord(body) && body.kind === "csv";
}

export async function writeCsv(req: Request, res: Response, status: number, body: CsvBody): Promise<void> {
  res.status(status);
  res.setHeader("Content-Type", "text/csv; charset=utf-8");
  // One listener for the whole answer (not one per wait): the client going away ends the loop.
  const closed = once(req, "close").then(() => "closed" as const);
  for await (const line of body.lines()) {
    if (res.destroyed) return; // the client went away: stop reading the store
    if (!res.write(line)) {
      const drained = once(res, "drain").then(() => "drained" as const);
      if ((await Promise.race([drained, closed])) === "closed") return;
    }
  }
  res.end();
}
