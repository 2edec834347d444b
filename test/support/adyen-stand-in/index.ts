import { ADYEN_DOCUMENTS, type RunningProxy, startPrismProxy } from "./prism-proxy.ts";
import { type AdyenStandIn, type StandInOptions, startAdyenStandIn } from "./stand-in.ts";

// The Adyen stand-in as a suite starts it: the stand-in, and one Prism validating proxy per Adyen API
// the connector calls (Checkout v71, Payout v50, Disputes v30), each forwarding to the stand-in. The
// connector (or a server configured for Adyen) is pointed at the proxies, never at the stand-in itself,
// so every call is checked against Adyen's contract; `violations()` collects what the proxies reported.

export { ADYEN_DOCUMENTS, startPrismProxy } from "./prism-proxy.ts";
export * from "./stand-in.ts";

/** Test credentials: the stand-in accepts exactly these. */
export const ADYEN_TEST_CREDENTIALS = {
  apiKey: "AQE-test-api-key",
  /** Payout v50's second credential: confirm and decline only. */
  payoutReviewerApiKey: "AQE-test-payout-reviewer-key",
  merchantAccount: "PaymentsPlatformECOM",
  hmacKey: "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056",
} as const;

export interface AdyenStack {
  standIn: AdyenStandIn;
  /** What the connector is configured with (AdyenSettings without the time-out). */
  settings: {
    apiKey: string;
    payoutReviewerApiKey: string;
    merchantAccount: string;
    checkoutUrl: string;
    payoutUrl: string;
    disputesUrl: string;
  };
  hmacKey: string;
  proxies: { checkout: RunningProxy; payouts: RunningProxy; disputes: RunningProxy };
  /** Every violation any proxy reported so far. */
  violations(): string[];
  stop(): Promise<void>;
}

export async function startAdyenStack(options: Partial<StandInOptions> = {}): Promise<AdyenStack> {
  const credentials = { ...ADYEN_TEST_CREDENTIALS, ...options };
  const standIn = await startAdyenStandIn(credentials);
  let proxies: RunningProxy[] = [];
  try {
    proxies = await Promise.all([
      startPrismProxy(ADYEN_DOCUMENTS.checkout, standIn.url),
      startPrismProxy(ADYEN_DOCUMENTS.payouts, standIn.url),
      startPrismProxy(ADYEN_DOCUMENTS.disputes, standIn.url),
    ]);
  } catch (error) {
    await standIn.stop();
    throw error;
  }
  const [checkout, payouts, disputes] = proxies as [RunningProxy, RunningProxy, RunningProxy];
  return {
    standIn,
    settings: {
      apiKey: credentials.apiKey,
      payoutReviewerApiKey: credentials.payoutReviewerApiKey,
      merchantAccount: credentials.merchantAccount,
      checkoutUrl: checkout.url,
      payoutUrl: payouts.url,
      disputesUrl: disputes.url,
    },
    hmacKey: credentials.hmacKey,
    proxies: { checkout, payouts, disputes },
    violations: () => proxies.flatMap((proxy) => proxy.violations()),
    async stop() {
      await Promise.all(proxies.map((proxy) => proxy.stop()));
      await standIn.stop();
    },
  };
}
