import { describe, expect, it } from "vitest";
import { balanceTransactionQuery, createdRange, createdRangeProblem, csvFileName } from "./balance-query.ts";

describe("createdRange", () => {
  it("turns UTC days, both included, into the API's created_gte and created_lt", () => {
    expect(createdRange("2026-11-01", "2026-11-30")).toEqual({
      created_gte: "2026-11-01T00:00:00.000Z",
      created_lt: "2026-12-01T00:00:00.000Z",
    });
    expect(createdRange("2026-12-31", undefined)).toEqual({ created_gte: "2026-12-31T00:00:00.000Z" });
    expect(createdRange(undefined, "2026-12-31")).toEqual({ created_lt: "2027-01-01T00:00:00.000Z" });
    expect(createdRange(undefined, undefined)).toEqual({});
  });

  it("leaves out what is not a day of the calendar", () => {
    expect(createdRange("2026-02-30", "yesterday")).toEqual({});
  });
});

describe("createdRangeProblem", () => {
  it("says what is wrong with a range, in words", () => {
    expect(createdRangeProblem("2026-11-01", "2026-11-30")).toBeNull();
    expect(createdRangeProblem("2026-11-30", "2026-11-30")).toBeNull();
    expect(createdRangeProblem(undefined, undefined)).toBeNull();
    expect(createdRangeProblem("2026-12-01", "2026-11-30")).toContain("is after");
    expect(createdRangeProblem("2026-13-01", undefined)).toContain("not a date: 2026-13-01");
    expect(createdRangeProblem(undefined, "30/11/2026")).toContain("“Created to” is not a date");
  });
});

describe("balanceTransactionQuery", () => {
  const address = {
    merchant_id: "mch_4fQx9ZkT2mB7rLp1WcYd8sNa",
    type: "charge",
    created_from: "2026-11-01",
    source: "tx_9Lm2QwErTy7UiOp3AsDf5GhJ",
    cashout_id: "co_8Hn3Jk5Lp7Qr9St2Uv4Wx6Yz",
    limit: "20",
    starting_after: "txn_8Jk2Lm4Np6Qr8St0Uv2Wx4Yz",
    unknown: "dropped",
  };

  it("passes the operation's filters, the range as instants, and the page's limit and cursor", () => {
    expect(balanceTransactionQuery(address)).toEqual({
      merchant_id: address.merchant_id,
      type: "charge",
      source: address.source,
      cashout_id: address.cashout_id,
      created_gte: "2026-11-01T00:00:00.000Z",
      limit: "20",
      starting_after: address.starting_after,
    });
  });

  it("asks for the whole filtered list as CSV: no limit, no cursor", () => {
    const csv = balanceTransactionQuery(address, { csv: true });
    expect(csv).not.toHaveProperty("limit");
    expect(csv).not.toHaveProperty("starting_after");
    expect(csv).toMatchObject({ merchant_id: address.merchant_id, created_gte: "2026-11-01T00:00:00.000Z" });
  });
});

describe("csvFileName", () => {
  it("names what the file holds", () => {
    expect(csvFileName({}, "2026-11-28")).toBe("balance-transactions-2026-11-28.csv");
    expect(csvFileName({ cashout_id: "co_8Hn3Jk5Lp7Qr9St2Uv4Wx6Yz", merchant_id: "mch_x" }, "2026-11-28")).toBe(
      "balance-transactions-co_8Hn3Jk5Lp7Qr9St2Uv4Wx6Yz.csv",
    );
    expect(
      csvFileName(
        { merchant_id: "mch_4fQx9ZkT2mB7rLp1WcYd8sNa", type: "fee", created_from: "2026-11-01" },
        "2026-11-28",
      ),
    ).toBe("balance-transactions-mch_4fQx9ZkT2mB7rLp1WcYd8sNa-fee-2026-11-01-to-2026-11-28.csv");
  });

  it("keeps only characters every file system takes", () => {
    expect(csvFileName({ source: "a/b c" }, "2026-11-28")).toBe("balance-transactions-a_b_c-2026-11-28.csv");
  });
});
