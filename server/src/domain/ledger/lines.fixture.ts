// For tests: a merchant's movements as its postings' lines (issue 36: the lines are the one record of a
// movement; ledger entries are kept only for pending capture credits, postings.ts isPendingCredit). Tests
// that check "each bucket is the sum of its movements" read them here rather than from ledger entries.

import { parseMerchantAccount } from "./accounts.ts";
import type { PostingDoc, PostingType } from "./records.ts";

export interface MerchantLine {
  bucket: string;
  amount: number;
  type: PostingType;
  source_id: string;
  posting_id: string;
}

/** Each line of `postings` on one of `merchantId`'s accounts, with its posting's type and source. */
export function merchantLinesOf(postings: readonly PostingDoc[], merchantId: string): MerchantLine[] {
  return postings.flatMap((p) =>
    p.lines.flatMap((line) => {
      const account = parseMerchantAccount(line.account);
      if (account?.merchantId !== merchantId) return [];
      return [{ bucket: account.bucket, amount: line.amount, type: p.type, source_id: p.source_id, posting_id: p.id }];
    }),
  );
}
