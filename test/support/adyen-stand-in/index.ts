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

/**
 * A server's settings with Adyen as its production acquirer (and with `sandbox`, the sandbox's too), every
 * Adyen API pointed at `url`: a Prism proxy loaded with Checkout v71 in front of the stand-in (or of the
 * call ledger). What the suites that start their own stand-in give their server (test/adyen/in-doubt.test.ts,
 * test/crash/adyen-crash.test.ts); the Adyen e2e run's servers get theirs from support/server.ts.
 */
export function adyenAcquirerSettings(
  url: string,
  options: { timeoutMs: number; sandbox?: boolean },
): Record<string, string> {
  return {
    ...(options.sandbox ? { SANDBOX_ACQUIRER: "adyen" } : {}),
    PRODUCTION_ACQUIRER: "adyen",
    ADYEN_ENVIRONMENT: "test",
    ADYEN_API_KEY: ADYEN_TEST_CREDENTIALS.apiKey,
    ADYEN_MERCHANT_ACCOUNT: ADYEN_TEST_CREDENTIALS.merchantAccount,
    ADYEN_HMAC_KEYS: ADYEN_TEST_CREDENTIALS.hmacKey,
    ADYEN_CHECKOUT_URL: url,
    // Not called by these suites: were one called, a Checkout proxy would count it as a violation.
    ADYEN_PAYOUT_URL: url,
    ADYEN_DISPUTES_URL: url,
    ADYEN_TIMEOUT_MS: String(options.timeoutMs),
  };
}

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
