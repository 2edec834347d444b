import type { NextAction } from "../../domain/charges/processor.ts";
import { LOCAL_METHODS } from "../../domain/charges/processor.ts";
import { isRecord } from "../../guards.ts";
import {
  type Acquirer,
  AcquirerInDoubt,
  AcquirerRefused,
  AcquirerUnsupported,
  type AuthenticationSummary,
  type Authorization,
  type LocalPayment,
  type ModificationReceived,
  type RedirectAction,
} from "./acquirer.ts";
import { type AdyenClient, createAdyenClient } from "./client.ts";
import type { components as Checkout, paths as CheckoutPaths } from "./contract/checkout.ts";
import type { paths as DisputePaths } from "./contract/disputes.ts";
import type { paths as PayoutPaths } from "./contract/payouts.ts";
import { failureFor } from "./failures.ts";
import { createTransport, TransportError } from "./transport.ts";

// The Adyen connector: the Acquirer port (./acquirer.ts) over Adyen's Checkout API v71 and Payout API v50,
// with a client typed from Adyen's own documents (contract/, trimmed by spec/scripts/adyen.mjs) by the
// project's toolchain: openapi-typescript types, openapi-fetch's types of a call (./client.ts sends them
// straight to node:http through ./transport.ts, without openapi-fetch's runtime). Adyen's Node library
// (@adyen/api-library) was not used for the calls: its services build their URLs from the environment
// and live prefix (no base URL to point at the stand-in for Checkout and Payout alike), bring their own
// HTTP client without a keep-alive agent or per-call time-out we control, and type requests from an older
// generation of the same documents. It is kept as the tests' outside judge of our HMAC signatures.
//
// Card data: Adyen accepts raw card fields (`paymentMethod.number`, `expiryMonth`, …) from merchants
// that are PCI DSS level 1 or 2 and have asked Adyen to enable it on their account; the card comes from
// our vault at the moment of the call and is never logged (errors quote Adyen's message, never the body).

export interface AdyenSettings {
  /** The API key (header X-API-Key) of the web service user; a secret, never logged. */
  apiKey: string;
  /**
   * The payout reviewer's API key: Payout v50 separates the credential that stores and submits payouts
   * from the one that confirms or declines them ("you need two API credentials", PayoutService-v50's
   * description), so it is sent only on confirmThirdParty and declineThirdParty. Absent: `apiKey`.
   */
  payoutReviewerApiKey?: string;
  /** The merchant account payments are made under (per platform, or chosen per merchant by the caller). */
  merchantAccount: string;
  /** Checkout API base (`https://checkout-test.adyen.com/v71` or the live prefix's; the stand-in in tests). */
  checkoutUrl: string;
  /** Payout API base (`https://pal-test.adyen.com/pal/servlet/Payout/v50`, or the live prefix's). */
  payoutUrl: string;
  /** Disputes API base (`https://ca-test.adyen.com/ca/services/DisputeService/v30`, or live). */
  disputesUrl: string;
  /** Per-request time-out; past it the call is in doubt and is repeated with the same key. */
  timeoutMs: number;
  maxSockets?: number;
}

/** Adyen's endpoints for its test environment, or for live under the account's URL prefix. */
export function adyenEndpoints(environment: "test" | "live", livePrefix?: string) {
  if (environment === "test") {
    return {
      checkoutUrl: "https://checkout-test.adyen.com/v71",
      payoutUrl: "https://pal-test.adyen.com/pal/servlet/Payout/v50",
      disputesUrl: "https://ca-test.adyen.com/ca/services/DisputeService/v30",
    };
  }
  if (!livePrefix || !/^[a-z0-9-]+$/i.test(livePrefix)) {
    throw new Error("Adyen live endpoints need the account's live URL prefix (Customer Area, Developers > API URLs)");
  }
  return {
    checkoutUrl: `https://${livePrefix}-checkout-live.adyenpayments.com/checkout/v71`,
    payoutUrl: `https://${livePrefix}-pal-live.adyenpayments.com/pal/servlet/Payout/v50`,
    disputesUrl: "https://ca-live.adyen.com/ca/services/DisputeService/v30",
  };
}

/** Adyen's payment method type for each of our local methods; SPEI has none in Checkout v71. */
const LOCAL_METHOD_TYPES = {
  pix: "pix",
  boleto: "boletobancario",
  oxxo: "oxxo",
  sepa_debit: "sepadirectdebit",
  spei: undefined,
} as const;

type PaymentResponse = Checkout["schemas"]["PaymentResponse"] | Checkout["schemas"]["PaymentDetailsResponse"];
type ServiceError = Checkout["schemas"]["ServiceError"];
type PaymentRequest = Checkout["schemas"]["PaymentRequest"];

export function createAdyenConnector(settings: AdyenSettings): Acquirer {
  const transport = createTransport({ timeoutMs: settings.timeoutMs, maxSockets: settings.maxSockets ?? 16 });
  const headers = { "X-API-Key": settings.apiKey };
  const checkout = createAdyenClient<CheckoutPaths>(settings.checkoutUrl, headers, transport);
  const payouts = createAdyenClient<PayoutPaths>(settings.payoutUrl, headers, transport);
  const disputes = createAdyenClient<DisputePaths>(settings.disputesUrl, headers, transport);
  const merchantAccount = settings.merchantAccount;

  /** A Disputes API answer: HTTP 200 with `disputeServiceResult.success` false is a refusal too. */
  function disputeResult(what: string, result: { success: boolean; errorMessage?: string }): void {
    if (!result.success) {
      throw new AcquirerRefused(200, undefined, `Adyen refused ${what}: ${result.errorMessage ?? "no message"}`);
    }
  }

  /** Runs one call: a transport failure, 429 or 5xx is in doubt; any other non-2xx is refused. */
  async function call<T>(what: string, send: () => Promise<{ data?: T; error?: unknown; status: number }>): Promise<T> {
    let result: { data?: T; error?: unknown; status: number };
    try {
      result = await send();
    } catch (error) {
      if (error instanceof TransportError) {
        throw new AcquirerInDoubt(`Adyen ${what}: ${error.message}; repeat with the same idempotency key`, {
          cause: error,
        });
      }
      throw error;
    }
    const { data, error, status } = result;
    if (status >= 200 && status < 300 && data !== undefined) return data;
    const problem = serviceError(error);
    // 704: "request already processed or in progress" — the first attempt with this key is still running.
    if (status === 429 || status >= 500 || problem.errorCode === "704") {
      throw new AcquirerInDoubt(`Adyen ${what}: HTTP ${status} ${problem.message ?? ""}`.trim());
    }
    throw new AcquirerRefused(
      status,
      problem.errorCode,
      `Adyen refused ${what} (HTTP ${status}${problem.errorCode ? `, error ${problem.errorCode}` : ""}): ${
        problem.message ?? "no message"
      }`,
    );
  }

  const idempotency = (key: string) => ({ header: { "Idempotency-Key": key } });

  function authorizationOf(response: PaymentResponse): Authorization {
    const reference = response.pspReference;
    switch (response.resultCode) {
      case "Authorised":
        if (!reference) throw new AcquirerInDoubt("Adyen authorised without a pspReference");
        return { status: "authorized", reference, ...authenticationOf(response) };
      case "Received":
      case "Pending":
        if (!reference) throw new AcquirerInDoubt(`Adyen answered ${response.resultCode} without a pspReference`);
        return { status: "pending", reference, ...authenticationOf(response) };
      case "RedirectShopper":
      case "ChallengeShopper":
      case "IdentifyShopper": {
        const action = redirectOf(response.action);
        if (!action) {
          throw new AcquirerRefused(
            200,
            undefined,
            `Adyen asked for ${response.resultCode} with an action this connector does not handle (${response.action?.type ?? "none"}): the connector requests the redirect flow`,
          );
        }
        return { status: "requires_action", reference, action };
      }
      case "Refused":
      case "Cancelled":
      case "Error": {
        const failure = failureFor(response.resultCode, response.refusalReasonCode);
        return { status: "declined", reference, ...failure, ...authenticationOf(response) };
      }
      default:
        throw new AcquirerInDoubt(`Adyen answered an unexpected resultCode ${response.resultCode ?? "(none)"}`);
    }
  }

  async function received(
    what: string,
    send: () => Promise<{ data?: { pspReference: string; status: "received" }; error?: unknown; status: number }>,
  ): Promise<ModificationReceived> {
    const data = await call(what, send);
    return { status: "received", reference: data.pspReference };
  }

  return {
    async authorizeCard(request) {
      const body: PaymentRequest = {
        merchantAccount,
        reference: request.chargeId,
        amount: { value: request.amount, currency: request.currency.toUpperCase() },
        paymentMethod: {
          type: "scheme",
          number: request.pan,
          expiryMonth: String(request.expMonth).padStart(2, "0"),
          expiryYear: String(request.expYear),
          ...(request.cvc === undefined ? {} : { cvc: request.cvc }),
          ...(request.holderName === undefined ? {} : { holderName: request.holderName }),
        },
        returnUrl: request.returnUrl,
        // Manual capture holds the authorization until our capture call; immediate captures with it.
        captureDelayHours: request.capture === "immediate" ? 0 : undefined,
        // The redirect flow: the payer completes 3-D Secure on a page of the issuer's and comes back to
        // returnUrl (issue 31's challenge step), rather than our page running Adyen's native 3DS2 SDK.
        authenticationData: { threeDSRequestData: { nativeThreeDS: "disabled" } },
        channel: "Web",
        shopperInteraction: "Ecommerce",
        ...(request.shopperIp === undefined ? {} : { shopperIP: request.shopperIp }),
      };
      if (request.capture === "manual") {
        body.additionalData = { manualCapture: "true" };
        delete body.captureDelayHours;
      }
      const response = await call("the card payment", () =>
        checkout.POST("/payments", { body, params: idempotency(request.idempotencyKey) }),
      );
      return authorizationOf(response);
    },

    async completeAuthentication(request) {
      const response = await call("the 3-D Secure completion", () =>
        checkout.POST("/payments/details", {
          body: { details: { redirectResult: request.redirectResult } },
          params: idempotency(request.idempotencyKey),
        }),
      );
      return authorizationOf(response);
    },

    capture(request) {
      return received("the capture", () =>
        checkout.POST("/payments/{paymentPspReference}/captures", {
          params: { path: { paymentPspReference: request.reference }, ...idempotency(request.idempotencyKey) },
          body: {
            merchantAccount,
            reference: request.merchantReference,
            amount: { value: request.amount, currency: request.currency.toUpperCase() },
          },
        }),
      );
    },

    cancel(request) {
      return received("the cancel", () =>
        checkout.POST("/payments/{paymentPspReference}/cancels", {
          params: { path: { paymentPspReference: request.reference }, ...idempotency(request.idempotencyKey) },
          body: { merchantAccount, reference: request.merchantReference },
        }),
      );
    },

    reverse(request) {
      return received("the reversal", () =>
        checkout.POST("/payments/{paymentPspReference}/reversals", {
          params: { path: { paymentPspReference: request.reference }, ...idempotency(request.idempotencyKey) },
          body: { merchantAccount, reference: request.merchantReference },
        }),
      );
    },

    refund(request) {
      return received("the refund", () =>
        checkout.POST("/payments/{paymentPspReference}/refunds", {
          params: { path: { paymentPspReference: request.reference }, ...idempotency(request.idempotencyKey) },
          body: {
            merchantAccount,
            reference: request.merchantReference,
            amount: { value: request.amount, currency: request.currency.toUpperCase() },
          },
        }),
      );
    },

    async startLocalPayment(request) {
      const body = localPaymentRequest(request, merchantAccount);
      const response = await call(`the ${request.method} payment`, () =>
        checkout.POST("/payments", { body, params: idempotency(request.idempotencyKey) }),
      );
      const reference = response.pspReference;
      if (response.resultCode === "Refused" || response.resultCode === "Error") {
        throw new AcquirerRefused(200, response.refusalReasonCode, `Adyen refused the ${request.method} payment`);
      }
      if (!reference) throw new AcquirerInDoubt(`Adyen started the ${request.method} payment without a pspReference`);
      return { reference, nextAction: nextActionOf(request, reference, response.action) };
    },

    ...payoutCalls(payouts, call, merchantAccount, settings.payoutReviewerApiKey ?? settings.apiKey),

    async defenseReasons(disputeReference) {
      const data = await call("the defense reasons", () =>
        disputes.POST("/retrieveApplicableDefenseReasons", {
          body: { merchantAccountCode: merchantAccount, disputePspReference: disputeReference },
        }),
      );
      disputeResult("the defense reasons", data.disputeServiceResult);
      return (data.defenseReasons ?? []).map((reason) => ({
        code: reason.defenseReasonCode,
        satisfied: reason.satisfied,
        documents: (reason.defenseDocumentTypes ?? []).map((type) => ({
          type: type.defenseDocumentTypeCode,
          requirement: type.requirementLevel,
          available: type.available,
        })),
      }));
    },

    async supplyDefenseDocuments(disputeReference, documents) {
      const data = await call("the defense documents", () =>
        disputes.POST("/supplyDefenseDocument", {
          body: {
            merchantAccountCode: merchantAccount,
            disputePspReference: disputeReference,
            defenseDocuments: documents.map((document) => ({
              defenseDocumentTypeCode: document.type,
              contentType: document.contentType,
              content: document.content.toString("base64"),
            })),
          },
        }),
      );
      disputeResult("the defense documents", data.disputeServiceResult);
    },

    async defendDispute(request) {
      const data = await call("the defense", () =>
        disputes.POST("/defendDispute", {
          headers: { "Idempotency-Key": request.idempotencyKey },
          body: {
            merchantAccountCode: merchantAccount,
            disputePspReference: request.disputeReference,
            defenseReasonCode: request.reasonCode,
          },
        }),
      );
      disputeResult("the defense", data.disputeServiceResult);
    },

    async acceptDispute(request) {
      const data = await call("accepting the dispute", () =>
        disputes.POST("/acceptDispute", {
          headers: { "Idempotency-Key": request.idempotencyKey },
          body: { merchantAccountCode: merchantAccount, disputePspReference: request.disputeReference },
        }),
      );
      disputeResult("accepting the dispute", data.disputeServiceResult);
    },

    close() {
      transport.close();
    },
  };
}

/** What /payments/details reports of the 3-D Secure authentication (`threeDS2Result`), when it does. */
/** An Adyen call as createAdyenConnector's `call` runs it: in doubt or refused, as its answer says. */
type Call = <T>(what: string, send: () => Promise<{ data?: T; error?: unknown; status: number }>) => Promise<T>;

/**
 * The port's payout calls over Payout v50: submit (storeDetailAndSubmitThirdParty) and confirm
 * (confirmThirdParty), each with its own derived Idempotency-Key (payout-rail.ts).
 */
function payoutCalls(
  payouts: AdyenClient<PayoutPaths>,
  call: Call,
  merchantAccount: string,
  reviewerApiKey: string,
): Pick<Acquirer, "payout" | "confirmPayout" | "declinePayout"> {
  // The reviewer's credential replaces the client's X-API-Key on confirm and decline only.
  const reviewer = (idempotencyKey: string) => ({ "X-API-Key": reviewerApiKey, "Idempotency-Key": idempotencyKey });
  return {
    async payout(request) {
      if (request.destination.type !== "iban") {
        throw new AcquirerUnsupported(
          `destination:${request.destination.type}`,
          `Adyen's payout API pays bank accounts by IBAN only; a ${request.destination.type} destination cannot be paid through Adyen`,
        );
      }
      const destination = request.destination;
      const data = await call("the payout", () =>
        payouts.POST("/storeDetailAndSubmitThirdParty", {
          // Payout v50's document declares no Idempotency-Key parameter, but Adyen honours the header on
          // every POST of its APIs ("API idempotency"), so it is sent all the same.
          headers: { "Idempotency-Key": request.idempotencyKey },
          body: {
            merchantAccount,
            reference: request.cashoutId,
            amount: { value: request.amount, currency: request.currency.toUpperCase() },
            bank: {
              iban: destination.iban,
              ownerName: destination.account_holder,
              countryCode: destination.iban.slice(0, 2),
            },
            recurring: { contract: "PAYOUT" },
            shopperEmail: request.holder.email,
            shopperReference: request.holder.shopperReference,
            entityType: request.holder.entityType,
            nationality: request.holder.nationality,
            dateOfBirth: request.holder.dateOfBirth,
          },
        }),
      );
      // Adyen answers "[payout-submit-received]" (its document writes it without the brackets).
      if (!/^\[?payout-submit-received\]?$/.test(data.resultCode)) {
        throw new AcquirerRefused(
          200,
          undefined,
          `Adyen did not accept the payout: ${data.refusalReason ?? data.resultCode}`,
        );
      }
      return { reference: data.pspReference };
    },

    async confirmPayout(request) {
      const data = await call("the payout's confirmation", () =>
        payouts.POST("/confirmThirdParty", {
          // As for the submission: the header is honoured though Payout v50 does not declare it.
          headers: reviewer(request.idempotencyKey),
          body: { merchantAccount, originalReference: request.reference },
        }),
      );
      // "[payout-confirm-received]" (the document writes it without the brackets), else Adyen's message.
      if (!/^\[?payout-confirm-received\]?$/.test(data.response)) {
        throw new AcquirerRefused(200, undefined, `Adyen did not confirm the payout: ${data.response}`);
      }
    },

    async declinePayout(request) {
      const data = await call("the payout's decline", () =>
        payouts.POST("/declineThirdParty", {
          headers: reviewer(request.idempotencyKey),
          body: { merchantAccount, originalReference: request.reference },
        }),
      );
      if (!/^\[?payout-decline-received\]?$/.test(data.response)) {
        throw new AcquirerRefused(200, undefined, `Adyen did not decline the payout: ${data.response}`);
      }
    },
  };
}

function authenticationOf(response: PaymentResponse): { authentication?: AuthenticationSummary } {
  const result = "threeDS2Result" in response ? response.threeDS2Result : undefined;
  if (!result) return {};
  return {
    authentication: { transStatus: result.transStatus, eci: result.eci, version: result.messageVersion },
  };
}

/** What this connector reads of the error body Adyen sent (its ServiceError): each field only as the string it is. */
function serviceError(error: unknown): Pick<ServiceError, "errorCode" | "message"> {
  if (!isRecord(error)) return {};
  return {
    ...(typeof error.errorCode === "string" ? { errorCode: error.errorCode } : {}),
    ...(typeof error.message === "string" ? { message: error.message } : {}),
  };
}

/** Adyen's `action` for a 3-D Secure redirect, or undefined for any other kind. */
function redirectOf(action: PaymentResponse["action"]): RedirectAction | undefined {
  if (action?.type !== "redirect" || !("url" in action) || typeof action.url !== "string") return undefined;
  const method = "method" in action && action.method === "POST" ? "POST" : "GET";
  const data = "data" in action && action.data ? action.data : undefined;
  return { type: "redirect_to_url", url: action.url, method, ...(data ? { data } : {}) };
}

function localPaymentRequest(request: LocalPayment, merchantAccount: string): PaymentRequest {
  const type = LOCAL_METHOD_TYPES[request.method];
  if (type === undefined) {
    throw new AcquirerUnsupported(`method:${request.method}`, `Adyen does not offer ${request.method} payments`);
  }
  const base = {
    merchantAccount,
    reference: request.chargeId,
    amount: { value: request.amount, currency: request.currency.toUpperCase() },
    returnUrl: request.returnUrl,
    channel: "Web" as const,
  };
  const payer = request.payer;
  const name =
    payer?.firstName !== undefined && payer.lastName !== undefined
      ? { shopperName: { firstName: payer.firstName, lastName: payer.lastName } }
      : {};
  switch (request.method) {
    case "pix":
      return { ...base, countryCode: "BR", paymentMethod: { type: "pix" } };
    case "oxxo":
      return { ...base, countryCode: "MX", paymentMethod: { type: "oxxo" }, ...name };
    case "boleto": {
      if (!payer?.taxId || !payer.address || !name.shopperName) {
        throw new AcquirerUnsupported(
          "method:boleto",
          "Adyen's boleto needs the payer's name, CPF/CNPJ and billing address, which this charge does not carry",
        );
      }
      return {
        ...base,
        countryCode: "BR",
        paymentMethod: { type: "boletobancario" },
        socialSecurityNumber: payer.taxId,
        billingAddress: payer.address,
        ...name,
        ...(payer.email === undefined ? {} : { shopperEmail: payer.email }),
      };
    }
    case "sepa_debit": {
      const ownerName = [payer?.firstName, payer?.lastName].filter(Boolean).join(" ");
      if (!request.iban || ownerName === "") {
        throw new AcquirerUnsupported(
          "method:sepa_debit",
          "Adyen's SEPA Direct Debit needs the IBAN and its holder's name",
        );
      }
      return { ...base, paymentMethod: { type: "sepadirectdebit", iban: request.iban, ownerName } };
    }
    default:
      throw new AcquirerUnsupported(`method:${request.method}`, `Adyen does not offer ${request.method} payments`);
  }
}

/** Our next_action (issue 31's shape, the simulator's fields) from Adyen's action for a local method. */
function nextActionOf(request: LocalPayment, reference: string, action: PaymentResponse["action"]): NextAction {
  const rule = LOCAL_METHODS[request.method];
  const fallbackExpiry = new Date(request.now.getTime() + rule.ttlSeconds * 1000).toISOString();
  const next: NextAction = { type: rule.nextAction, reference, expires_at: fallbackExpiry };
  if (action?.type === "qrCode" && "qrCodeData" in action) {
    if (action.qrCodeData) next.qr_payload = action.qrCodeData;
    if (action.expiresAt) next.expires_at = new Date(action.expiresAt).toISOString();
  }
  if (action?.type === "voucher" && "reference" in action) {
    if (action.reference) next.reference = action.reference;
    if (action.expiresAt) next.expires_at = new Date(action.expiresAt).toISOString();
  }
  return next;
}
