// The fraud-evaluation port (DESIGN §10). Charges ask it before authorizing. The evaluation engine is
// a later piece of work; until then the only adapter allows everything, and says so in its name.
// It does not emit `fraud.evaluated`: an event claiming an evaluation that never happened would lie.

export interface FraudInput {
  livemode: boolean;
  merchantId: string;
  amount: number;
  currency: string;
  paymentMethodType: string;
  cardFingerprint?: string | undefined;
  cardFirst4?: string | undefined;
  customer?: { email?: string | undefined; ip?: string | undefined; country?: string | undefined } | null;
}

export interface FraudVerdict {
  decision: "allow" | "review" | "block";
  score: number;
  signals: string[];
}

export interface FraudScreen {
  evaluate(input: FraudInput): Promise<FraudVerdict>;
}

/** Not fraud detection: a placeholder that lets every charge through until the evaluation engine exists. */
export const allowAllFraudScreen: FraudScreen = {
  evaluate: async () => ({ decision: "allow", score: 0, signals: [] }),
};
