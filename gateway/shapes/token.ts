/**
 * The network token as partners read it (docs/tokens.md, "The Token"), declared once: the API's
 * answers (gateway/tokens/store.ts's `toToken`), the events' `data` (gateway/outbox/partner-events.ts)
 * and the SDK's types all use these. Never the token's number: the gateway does not receive it.
 */

// The wallets, statuses and device of a token are the processor's (docs/upstreams.md 10.1): the
// partner reads the same values.
// The `change` of a `token.updated` event is the processor's list too (10.5).
import {
  TOKEN_CHANGES,
  TOKEN_DEVICE_TYPES,
  TOKEN_STATUSES,
  WALLET_PROVIDERS,
  type TokenChange,
  type TokenDevice,
  type TokenDeviceType,
  type TokenStatus,
  type WalletProvider,
} from '../../contracts/upstreams';

export { TOKEN_CHANGES, TOKEN_DEVICE_TYPES, TOKEN_STATUSES, WALLET_PROVIDERS, type TokenChange, type TokenDevice, type TokenDeviceType, type TokenStatus, type WalletProvider };

/** The statuses a token never leaves. */
export const FINAL_TOKEN_STATUSES: readonly TokenStatus[] = ['deactivated', 'declined'];

/** Who holds a suspended token suspended, in the partner's view (absent: the network did). */
export type TokenSuspendedBy = 'partner' | 'card_state';

/**
 * Who made a change in the token's history: the tokenization decision's step (`card_state`,
 * `spend_controls`, `partner`, `partner_default`, `network`), `verification` (the code was
 * entered), `partner` (a partner's route), `card_state` (the cascade, a move), `network` (the
 * processor or the network on its own).
 */
export type TokenHistoryBy = 'card_state' | 'spend_controls' | 'partner' | 'partner_default' | 'network' | 'verification';

/** One entry of a token's history, oldest first. */
export interface TokenHistoryEntry {
  status: TokenStatus;
  at: string;
  by: TokenHistoryBy;
  reason?: string;
}

/** The partner's Token (docs/tokens.md). */
export interface Token {
  _id: string;
  cardKey: string;
  walletProvider: WalletProvider;
  tokenRequestorId: string;
  last4: string;
  tokenExpDate: string;
  device: TokenDevice;
  status: TokenStatus;
  /** Only while `suspended`, and only when the partner or the card's state holds it. */
  suspendedBy?: TokenSuspendedBy;
  createdAt: string;
  updatedAt: string;
  history: TokenHistoryEntry[];
}

/** The data of `token.created`. */
export interface TokenCreatedData {
  token: Token;
}

/** The data of `token.updated`. */
export interface TokenUpdatedData {
  token: Token;
  previousStatus: TokenStatus;
  change: TokenChange;
}

/** The data of `token.verification_code`: the code is replaced by `null` once `expiresAt` has passed. */
export interface TokenVerificationCodeData {
  token: Token;
  code: string | null;
  expiresAt: string;
}
