import { group, int, setting } from "./kit.ts";

// How long things wait: 3-D Secure, payment pages, disputes, cashouts, and how often the background jobs
// that move them along run (startup/jobs.ts).

export const lifecycleSettings = group("lifecycles and jobs", {
  JOBS_INTERVAL_SECONDS: setting(
    int(1, 86400).default(60),
    "How often the background jobs run: expiring unpaid local payments, settling pending funds, moving cashouts.",
  ),
  THREE_D_SECURE_EXPIRY_SECONDS: setting(
    int(60, 7 * 86400).default(3600),
    'How long a card charge waits in `requires_action` for the payer\'s 3-D Secure answer before the expiry job expires it (docs/three-d-secure.md "Expiry"); the sandbox clock moves it too.',
  ),
  PAYMENT_PAGE_TOKEN_TTL_SECONDS: setting(
    int(60, 86400).default(3600),
    "How long the token in a hosted payment page stays valid (a payer must pay within it, or reload).",
  ),
  DISPUTE_EVIDENCE_SECONDS: setting(
    int(60, 90 * 86400).default(7 * 86400),
    "How long a merchant has to submit evidence on a dispute (its `evidence_due_by`); default 7 days.",
  ),
  CASHOUT_PENDING_SECONDS: setting(
    int(0, 30 * 86400).default(3600),
    "How long a cashout stays `pending` (and can be canceled) before the payout job sends it.",
  ),
  CASHOUT_TRANSIT_SECONDS: setting(
    int(1, 30 * 86400).default(86400),
    "How long after sending a cashout the payout job asks the payout rail whether it was paid.",
  ),
});
