/**
 * The network token as partners read it (docs/tokens.md, "The Token"), declared once: the API's
 * answers (gateway/tokens/store.ts's `toToken`), the events' `data` (gateway/outbox/partner-events.ts)
 * and the SDK's types all use these. Never the token's number: the gateway does not receive it.
 */

/** Who asked for the token: a wallet, or a merchant keeping the card on file. */
export const WALLET_PROVIDERS = ['apple_pay', 'google_pay', 'samsung_pay', 'merchant'] as const;
export type WalletProvider = (typeof WALLET_PROVIDERS)[number];

/** A token's statuses; `deactivated` and `declined` are final. */
export const TOKEN_STATUSES = ['requested', 'pending_verification', 'active', 'suspended', 'deactivated', 'declined'] as const;
export type TokenStatus = (typeof TOKEN_STATUSES)[number];

/** The statuses a token never leaves. */
export const FINAL_TOKEN_STATUSES: readonly TokenStatus[] = ['deactivated', 'declined'];

/** The device types a wallet describes. */
export const TOKEN_DEVICE_TYPES = ['phone', 'watch', 'tablet', 'wearable', 'computer', 'other'] as const;
export type TokenDeviceType = (typeof TOKEN_DEVICE_TYPES)[number];

/** What the wallet said about the device (`{type: "other"}` for a merchant token). */
export interface TokenDevice {
  type: TokenDeviceType;
  name?: string;
  /** ISO 3166-1 alpha-2. */
  ipCountry?: string;
}

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

/** The `change` of a `token.updated` event. */
export const TOKEN_CHANGES = ['activated', 'suspended', 'resumed', 'deactivated', 'declined', 'card_updated', 'device_updated'] as const;
export type TokenChange = (typeof TOKEN_CHANGES)[number];

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
