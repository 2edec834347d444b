import type { Schemas } from "../kernel/operations.ts";
import type { TokenDoc } from "./records.ts";
import type { Revealed } from "./tokens.ts";

// Stored tokens → the contract's Token and TokenReveal. A token shows the card's brand, first and last
// four digits and fingerprint; the number itself leaves only through the audited reveal.

export const token = (t: TokenDoc): Schemas["Token"] => ({
  id: t.id,
  object: "token",
  card: {
    brand: t.brand,
    first4: t.first4,
    last4: t.last4,
    exp_month: t.exp_month,
    exp_year: t.exp_year,
    fingerprint: t.fingerprint,
  },
  holder: t.holder,
  livemode: t.livemode,
  created_at: t.created_at,
});

/** revealToken's answer: the card number, once, to a `vault` key (never stored for replay: `x-sensitive`). */
export const tokenReveal = ({ token: t, pan, revealedAt }: Revealed): Schemas["TokenReveal"] => ({
  id: t.id,
  object: "token_reveal",
  card: { number: pan, exp_month: t.exp_month, exp_year: t.exp_year },
  holder: t.holder,
  livemode: t.livemode,
  revealed_at: revealedAt,
});

export const deletedToken = (t: TokenDoc): Schemas["DeletedToken"] => ({ id: t.id, object: "token", deleted: true });
