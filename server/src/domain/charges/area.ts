import type { Disputes } from "../disputes/disputes.ts";
import type { AreaContext, AreaDeclaration } from "../kernel/area.ts";
import { inBothEnvironments } from "../kernel/area.ts";
import type { MoneyRules } from "../kernel/money.ts";
import type { SettingsOf } from "../kernel/settings.ts";
import type { FeeSchedules } from "../ledger/fee-schedules.ts";
import type { Merchants } from "../merchants/merchants.ts";
import type { SandboxClock } from "../sandbox-clock/sandbox-clock.ts";
import { openSecret, sealSecret, type VaultKeys } from "../vault/crypto.ts";
import type { Tokens } from "../vault/tokens.ts";
import { type Charges, createCharges } from "./charges.ts";
import type { ChargesDeps } from "./context.ts";
import type { FraudScreen } from "./fraud-screen.ts";
import { chargeHandlers } from "./handlers.ts";
import type { Processor } from "./processor.ts";
import { chargeCollections } from "./records.ts";
import { CHARGE_MACHINE, REFUND_MACHINE, REVIEW_MACHINE } from "./state.ts";
import { createChallengeLinks } from "./three-d-secure.ts";

// Charges, refunds and reviews (spec/resources/charges.tsp, refunds.tsp), as the list of areas sees them
// (domain/areas.ts).

/** What charges call in other areas; the ports (the fraud screen, the link follower) are this area's. */
type Needs = {
  merchants: Merchants;
  tokens: Tokens;
  fraud: { screen: FraudScreen };
  feeSchedules: Pick<FeeSchedules, "scheduleFor">;
  /** A payment link follows its charges' outcomes (payment-links/area.ts). */
  chargeFollower: { follow: ChargesDeps["onTransition"] };
  disputes: Pick<Disputes, "scheduleTestCardDispute">;
  sandboxClock: Pick<SandboxClock, "refresh">;
};

type Deps = {
  money: MoneyRules;
  vaultKeys: VaultKeys;
  processors: { live: Processor | null; sandbox: Processor };
  /** Replaces the fraud engine as the screen every charge passes (tests of other rules). */
  fraudScreen?: FraudScreen | undefined;
  baseUrl: () => string;
  settings: SettingsOf<"charges">;
};

type Context = AreaContext<typeof chargeCollections, Needs, Deps>;

export const chargesArea = {
  name: "charges",
  collections: chargeCollections,
  idPrefixes: ["tx", "re"],
  machines: [CHARGE_MACHINE, REVIEW_MACHINE, REFUND_MACHINE],
  make: ({ store, clock, log, observer, needs, deps }: Context): { charges: Charges } => ({
    charges: createCharges({
      store,
      clock,
      merchants: needs.merchants,
      tokens: needs.tokens,
      money: deps.money,
      processors: deps.processors,
      fraud: deps.fraudScreen ?? needs.fraud.screen,
      settlementDelaySeconds: deps.settings.charges.settlementDelaySeconds,
      sandboxSettlementDelaySeconds: deps.settings.charges.sandboxSettlementDelaySeconds,
      // Payment links and disputes are made after charges: both are called only once a request comes.
      onTransition: (tx, from, charge) => needs.chargeFollower.follow(tx, from, charge),
      onCapture: (tx, captured) => needs.disputes.scheduleTestCardDispute(tx, captured),
      observer,
      fees: needs.feeSchedules.scheduleFor,
      threeDSecureExpirySeconds: deps.settings.charges.threeDSecureExpirySeconds,
      challengeLinks: createChallengeLinks(deps.vaultKeys.fingerprintKey, deps.baseUrl),
      intentLockSeconds: deps.settings.charges.intentLockSeconds,
      log,
      sealing: {
        seal: (text, context) => sealSecret(text, context, deps.vaultKeys),
        open: (sealed, context) => openSecret(sealed, context, deps.vaultKeys),
      },
    }),
  }),
  handlers: chargeHandlers,
  jobs: ({ needs }: Context, { charges }: { charges: Charges }) => {
    const inBoth = (job: (livemode: boolean) => Promise<number>) => inBothEnvironments(needs.sandboxClock.refresh, job);
    return {
      /** Expires unpaid local payments, and unauthenticated card charges (3-D Secure), whose next_action has run out. */
      expire: () => inBoth((livemode) => charges.expireDue(livemode)),
      /** Resolves calls to the acquirer left in doubt by a crash (domain/charges/intents.ts). */
      recoverIntents: () => inBoth((livemode) => charges.recoverIntentsDue(livemode)),
      /** Voids charges whose fraud review was left open past its window. */
      expireReviews: () => inBoth((livemode) => charges.expireReviewsDue(livemode)),
    };
  },
} as const satisfies AreaDeclaration;
