import { describe, expect, it } from "vitest";
import { failureFor } from "./failures.ts";

describe("Adyen refusal reasons as failure codes", () => {
  it("keeps what a payer can act on and folds the rest", () => {
    expect(failureFor("Refused", "12").failureCode).toBe("insufficient_funds");
    expect(failureFor("Refused", "28").failureCode).toBe("insufficient_funds");
    expect(failureFor("Refused", "6").failureCode).toBe("expired_card");
    for (const code of ["2", "5", "14", "20", "24", "27", undefined]) {
      expect(failureFor("Refused", code).failureCode, String(code)).toBe("card_declined");
    }
    for (const code of ["0", "4", "9", "42"]) expect(failureFor("Refused", code).failureCode).toBe("processing_error");
    expect(failureFor("Error", "2").failureCode).toBe("processing_error");
    expect(failureFor("Refused", "12").failureMessage).toBe("The card has insufficient funds.");
  });
});
