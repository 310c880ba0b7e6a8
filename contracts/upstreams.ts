/**
 * Upstream DTOs, exactly as docs/upstreams.md (sections 4, 5, 6 and 10) describes them: the one
 * declaration the gateway's clients (gateway/upstreams/) and the sandboxes (sandbox/) both read.
 * These are the *upstream's* shapes: handlers map them to the partner API's shapes, never forward
 * them blindly (an issuer card may carry `cardNumber`/`cvv`, see {@link IssuerCard}). This folder
 * imports nothing: it is the lowest layer of both.
 */

/** The three upstream systems. */
export type UpstreamName = 'issuer' | 'processing' | 'accounts';

// ---------------------------------------------------------------------------------------------
// Accounts (section 4)

/** `idType` values of an individual (spec 2.2). */
export const ID_TYPES = ['PASSPORT', 'DRIVER_LICENSE', 'RESIDENCE_CARD', 'MINOR_WITHOUT_ID', 'OTHER'] as const;
export type IdType = (typeof ID_TYPES)[number];

/** Body of `POST /accounts` (4.1): the create-individual body plus the ownership keys. */
export interface CreateAccountRequest {
  partnerId: string;
  /** The gateway's individual onboarding `_id`; unique per account. */
  onboardingId: string;
  baasAccountClientId?: number | string;
  firstName: string;
  middleName: string;
  lastName: string;
  country: string;
  birthDate: string;
  email: string;
  phone: string;
  idType: IdType;
  passportNumber: string;
  city?: string;
  stateProvince?: string;
  zipCode?: string;
  buildingNumber?: string;
  address1?: string;
  address2?: string;
  issuingDate?: string;
  validityDate?: string;
  passportCountry?: string;
  birthCountry?: string;
  nationality?: string;
  taxCountry?: string;
  taxIdNumber?: string;
  fatca?: string;
}

/** 201 answer of `POST /accounts`: exactly these three fields. */
export interface CreatedAccount {
  accountId: string;
  /** 8-digit numeric string; the issuer's `clientCode` for this individual's cards. */
  clientId: string;
  status: 'CREATED';
}

/** An account as answered by `GET /accounts/{accountId}` (4.2). */
export interface UpstreamAccount {
  accountId: string;
  clientId: string;
  status: 'CREATED';
  partnerId: string;
  onboardingId: string;
  baasAccountClientId: string | null;
  /** Every other request field, as received. */
  individual: Record<string, unknown>;
  createdAt: string;
}

/** Answer of `GET /accounts?onboardingId=` (4.3): zero or one element. */
export interface AccountList {
  data: UpstreamAccount[];
}

// ---------------------------------------------------------------------------------------------
// Issuer (section 5)

/** Raw issuer status codes (5.1). */
export type IssuerStatusCode = '00' | 'I1' | 'L1' | 'T1' | 'S1' | 'S2' | 'S3' | 'S4' | 'S5' | 'S6';

export type CardType = 'virtual' | 'physical';

/** The issuer's "full card" (5.2). */
export interface IssuerCard {
  cardKey: string;
  /** `5355 70** **** 1234` */
  cardMask: string;
  type: CardType;
  statusCode: IssuerStatusCode;
  currency: string;
  productCode: string;
  holderClientCode: string;
  /** `MM/YYYY` */
  expDate: string;
  /** `""` when none was given. */
  embossedName: string;
  createdAt: string;
  /** Leaked PAN (trigger `SANDBOX-LEAK`): must be stripped, never forwarded or logged. */
  cardNumber?: string;
  /** Leaked CVV (trigger `SANDBOX-LEAK`): must be stripped, never forwarded or logged. */
  cvv?: string;
}

/** Body of `POST /cards` (5.3). */
export interface CreateCardRequest {
  type: CardType;
  /** The accounts `clientId` (or a B2B client code); becomes `holderClientCode`. */
  clientCode: string;
  /** `MM/YYYY`, not a month already over. */
  expDate: string;
  /** 3 upper-case letters. */
  currency: string;
  productCode: string;
  /** ≤ 26 chars. */
  embossedName?: string;
  shippingAddressId?: string;
}

/** Answer of `GET /cards/{cardKey}/status` (5.4). */
export interface CardStatusResult {
  cardKey: string;
  statusCode: IssuerStatusCode;
}

/** Actions of `POST /cards/{cardKey}/status` (5.5). */
export type StatusAction =
  | 'lock'
  | 'unlock'
  | 'activate'
  | 'temporary-lock'
  | 'restrict'
  | 'lost'
  | 'stolen'
  | 'closed'
  | 'fraud'
  | 'mobile-lost';

/** Body of `POST /cards/{cardKey}/status` (5.5); `expDate` is required for lock, unlock, activate, temporary-lock. */
export interface StatusChangeRequest {
  action: StatusAction;
  expDate?: string;
  reason?: string;
  description?: string;
  cardLocation?: string;
}

/** Answer of `POST /cards/{cardKey}/status` (5.5). */
export interface StatusChangeResult {
  cardKey: string;
  statusCode: IssuerStatusCode;
  previousStatusCode: IssuerStatusCode;
}

/** Body of `POST /cards/{cardKey}/replace` and `/reissue` (5.7, 5.8); `expDate` is the new card's. */
export interface SuccessorRequest {
  expDate: string;
  reason?: string;
  pinMailer?: string;
}

/** Answer of replace / re-issue: only the new key. */
export interface SuccessorResult {
  cardKey: string;
}

/** Query of `GET /cards/{cardKey}/cvv` and `/pan` (5.9). */
export interface SecretQuery {
  /** `MM/YYYY` */
  expDate: string;
  /** base64 (standard or url-safe) of an RSA SPKI DER public key, ≥ 2048 bits. */
  securityKey: string;
}

/** Answer of `GET /cards/{cardKey}/cvv`: base64 RSA-OAEP-256 ciphertext under the security key. */
export interface EncryptedCvv {
  cvv: string;
}

/** Answer of `GET /cards/{cardKey}/pan`: base64 RSA-OAEP-256 ciphertext under the security key. */
export interface EncryptedPan {
  cardNumber: string;
}

/** Answer of `GET /pin-encryption-key` (5.12). */
export interface PinEncryptionKey {
  keyId: string;
  algorithm: 'RSA-OAEP-256';
  /** SPKI PEM. */
  publicKey: string;
}

/** Body of `POST /cards/{cardKey}/pin/change` (5.11). */
export interface PinChangeRequest {
  expDate: string;
  /** base64 RSA-OAEP-256 PIN block under the issuer's PIN key. */
  pin: string;
}

/** Body of `POST /cards/{cardKey}/pin/force-lock` (5.11). */
export interface ForcePinLockRequest {
  expDate: string;
}

/** Body of `POST /cards/{cardKey}/authorize` (5.11). */
export interface AuthorizeRequest {
  /** base64 RSA-OAEP-256 PIN block under the issuer's PIN key. */
  pin: string;
}

/** The issuer's limit names (5.13), in its fixed order. */
export const LIMIT_NAMES = ['dailyPurchase', 'monthlyPurchase', 'dailyWithdrawal', 'monthlyWithdrawal', 'singleTransaction'] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/** A card limit (5.13); `available = max(0, value − used)`. */
export interface CardLimit {
  name: LimitName;
  value: number;
  currency: string;
  used: number;
  available: number;
}

/**
 * One limit update. `name` is a plain string: the partner API does not close the set of names
 * and the issuer answers 404 `UNKNOWN_LIMIT` itself.
 */
export interface LimitUpdate {
  name: string;
  value: number;
}

/** Answer of `GET /cards/{cardKey}/limits/{name}/available`. */
export interface AvailableLimit {
  available: number;
}

// ---------------------------------------------------------------------------------------------
// Processing (section 6)

/** Body of `POST /webhooks/card-created` (6.1). */
export interface CardCreatedEvent {
  event: 'card_created';
  cardKey: string;
  /** The replaced / re-issued card. */
  previousCardKey?: string;
  cardMask: string;
  type: CardType;
  ownerType: 'individual' | 'b2b';
  /** Individual `_id` or B2B tenant id. */
  ownerId: string;
  partnerId: string;
  /** ISO-8601 date-time. */
  occurredAt: string;
  /** What `GET /transactions?accountId=` matches; the processor defaults it to `ownerId`. */
  accountId?: string;
  /** Currency of the card's transactions; default `EUR`. */
  currency?: string;
}

/** Answer of the `card_created` webhook (202). */
export interface WebhookReceipt {
  received: true;
}

/** Query of `GET /transactions` (6.2): at least one of `accountId`, `cardId`. */
export interface TransactionQuery {
  accountId?: string;
  cardId?: string;
  /** ≥ 1 */
  page: number;
  /** 1–100 */
  limit: number;
}

export type TransactionType = 'PURCHASE' | 'WITHDRAWAL' | 'REFUND';
export type TransactionStatus = 'PENDING' | 'SETTLED' | 'DECLINED' | 'REVERSED' | 'EXPIRED';
/** A step of a transaction's life (docs/transactions.md). */
export type TransactionStepKind = 'authorization' | 'clearing' | 'reversal' | 'expiry' | 'refund' | 'decline';

/** One step of a transaction's history: what happened, for how much, when. */
export interface TransactionStep {
  kind: TransactionStepKind;
  amount: number;
  at: string;
}

/** One transaction of the processing system (6.2). */
export interface Transaction {
  id: string;
  cardId: string;
  accountId: string | null;
  /** > 0; the type says which way the money went. */
  amount: number;
  currency: string;
  type: TransactionType;
  merchant: { name: string; mcc: string; city: string; country: string };
  status: TransactionStatus;
  createdAt: string;
  /**
   * The lifecycle fields (docs/upstreams.md, 6.2): a processor that does not send them yet is read
   * as a one-step transaction (`normalizeTransaction`).
   */
  updatedAt?: string;
  /** Grows by one with each step; equals `history.length`. */
  version?: number;
  settledAmount?: number | null;
  declineReason?: string | null;
  relatedTransactionId?: string | null;
  authorizationId?: string | null;
  history?: TransactionStep[];
  /** The token a purchase was made with (10.8), the same on every step; null for a purchase with the card itself. */
  tokenReference?: string | null;
}

/** The control routes' `notify`: deliver the notification, lose it (`drop`), or keep it until released (`hold`). */
export type SandboxNotify = 'deliver' | 'drop' | 'hold';

/** Body of the processing sandbox's control route `POST /__sandbox/authorizations` (sandbox mode only). */
export interface SimulatedAuthorization {
  /** The card; with `tokenReference` it may be left out (the processor reads the token's current card). */
  cardId?: string;
  /** A purchase made with this token (10.8) instead of the card itself. */
  tokenReference?: string;
  amount: number;
  currency?: string;
  type?: 'PURCHASE' | 'WITHDRAWAL';
  merchant?: { name?: string; mcc?: string; city?: string; country?: string };
  authorizationId?: string;
  notify?: SandboxNotify;
}

/** A later step the processing sandbox plays on a transaction (`POST /__sandbox/transactions/{id}/<step>`). */
export type SimulatedStep = 'clearing' | 'reversal' | 'expiry' | 'refund';

/** The processing system's change feed page (`GET /transactions/changes`, 6.x). */
export interface TransactionChanges {
  data: Transaction[];
  nextCursor: string;
}

/** Body of the processing sandbox's control route `POST /__sandbox/transactions` (sandbox mode only). */
export interface SimulatedTransactionRequest {
  cardId: string;
  amount: number;
  currency: string;
  type?: 'authorization' | 'clearing' | 'decline';
  merchant?: { name?: string; mcc?: string; city?: string; country?: string };
  declineReason?: string;
  notify?: SandboxNotify;
}

/** Body of the issuer sandbox's control route `POST /__sandbox/cards/{cardKey}/issuer-status` (sandbox mode only). */
export interface IssuerStatusSimulation {
  statusCode: IssuerStatusCode;
  reason?: string;
}

/** Answer of `POST /__sandbox/cards/{cardKey}/issuer-status`. */
export interface IssuerStatusSimulationResult {
  cardKey: string;
  statusCode: IssuerStatusCode;
  previousStatusCode: IssuerStatusCode;
}

/** Answer of `GET /transactions` (6.2). */
export interface TransactionPage {
  data: Transaction[];
  total: number;
  page: number;
  limit: number;
}

/** `OperationType` of `POST /fees` (6.3). */
export const FEE_OPERATION_TYPES = ['CARD_ISSUING_FEE', 'CARD_DELIVERY_FEE'] as const;
/** `CustomerType` of `POST /fees` (6.3, spec 4.4.1). */
export const FEE_CUSTOMER_TYPES = ['Consumer Debit', 'Business Debit', 'Consumer Prepaid', 'Business Prepaid'] as const;
/** `ProductType` of `POST /fees` (6.3, spec 4.4.1). */
export const FEE_PRODUCT_TYPES = ['R001', 'R002', 'R003', 'R004', 'R005', 'R006'] as const;
export type FeeOperationType = (typeof FEE_OPERATION_TYPES)[number];
export type FeeCustomerType = (typeof FEE_CUSTOMER_TYPES)[number];
export type FeeProductType = (typeof FEE_PRODUCT_TYPES)[number];

/** Body of `POST /fees` (6.3): at least one of `cardKey`, `clientId`, `iban`. */
export interface FeeRequest {
  OperationType: FeeOperationType;
  CustomerType: FeeCustomerType;
  ProductType: FeeProductType;
  cardKey?: string;
  clientId?: string;
  iban?: string;
}

/** Answer of `POST /fees` (6.3). */
export interface FeeResult {
  OperationType: FeeOperationType;
  CustomerType: FeeCustomerType;
  ProductType: FeeProductType;
  fee: number;
  currency: string;
}

/** One delivery method (6.4). */
export interface DeliveryMethod {
  id: string;
  type: 'postal' | 'courier';
  carrier: string;
  name: string;
  estimatedDays: number;
  fee: number;
  currency: string;
}

/** Answer of `GET /delivery-methods?country=` (6.4). */
export interface DeliveryMethods {
  success: boolean;
  /** Upper-case ISO-2. */
  country: string;
  deliveryMethods: DeliveryMethod[];
}

/** Body of `POST /cards/status-update` (6.5). */
export interface StatusUpdate {
  cardKey: string;
  statusCode: IssuerStatusCode;
  /** ≤ 500 chars. */
  reason?: string;
}

/** Answer of `POST /cards/status-update`. */
export interface StatusUpdateReceipt {
  accepted: true;
}

// ---------------------------------------------------------------------------------------------
// Network tokens and wallets (section 10)

/** Who asked for a token (10.1): a wallet, or a merchant keeping the card on file. */
export const WALLET_PROVIDERS = ['apple_pay', 'google_pay', 'samsung_pay', 'merchant'] as const;
export type WalletProvider = (typeof WALLET_PROVIDERS)[number];

/** A token's statuses (10.1); `deactivated` and `declined` are final. */
export const TOKEN_STATUSES = ['requested', 'pending_verification', 'active', 'suspended', 'deactivated', 'declined'] as const;
export type TokenStatus = (typeof TOKEN_STATUSES)[number];

/** What a wallet says the device is (10.1). */
export const TOKEN_DEVICE_TYPES = ['phone', 'watch', 'tablet', 'wearable', 'computer', 'other'] as const;
export type TokenDeviceType = (typeof TOKEN_DEVICE_TYPES)[number];

/** The device a token lives on, as the wallet described it; `{type: "other"}` for a merchant token. */
export interface TokenDevice {
  type: TokenDeviceType;
  /** 1–64 characters. */
  name?: string;
  /** ISO 3166-1 alpha-2. */
  ipCountry?: string;
}

/** The processor's token (10.1). Never the token's full number nor a cryptogram. */
export interface Token {
  /** `tref_` + 24 hex: stable for the token's life (a move keeps it). */
  tokenReference: string;
  /** The card the token stands for now (a move changes it). */
  cardKey: string;
  /** The tokenization request that made it (10.3), or null for a token made on the processor's stand-in alone. */
  tokenizationId: string | null;
  walletProvider: WalletProvider;
  /** 11 digits: the network's id of the wallet or merchant. */
  tokenRequestorId: string;
  /** The last four digits of the token's own number, never the card's. */
  last4: string;
  /** `MM/YYYY`: the token's own expiry. */
  tokenExpDate: string;
  device: TokenDevice;
  status: TokenStatus;
  /** 1, and one more with each change of the token: what the gateway orders states by. */
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** Body of `POST /tokens/provisioning/apple-pay` (10.2). */
export interface ApplePayProvisioningRequest {
  cardKey: string;
  /** 1 to 3 standard base64 DER certificates (100 to 4,096 characters each), leaf first. */
  certificates: string[];
  /** Standard base64 of 4 to 64 bytes. */
  nonce: string;
  /** Standard base64 of 16 to 512 bytes. */
  nonceSignature: string;
}

/** 200 answer of `POST /tokens/provisioning/apple-pay` (10.2): opaque, passed on unchanged, never logged or stored. */
export interface ApplePayProvisioningResult {
  activationData: string;
  encryptedPassData: string;
  ephemeralPublicKey: string;
}

/** Body of `POST /tokens/provisioning/google-pay` (10.2). */
export interface GooglePayProvisioningRequest {
  cardKey: string;
  /** 1 to 64 visible ASCII characters. */
  walletAccountId: string;
  /** 1 to 64 visible ASCII characters. */
  deviceId: string;
}

/** 200 answer of `POST /tokens/provisioning/google-pay` (10.2): `opaquePaymentCard` opaque, never logged or stored. */
export interface GooglePayProvisioningResult {
  opaquePaymentCard: string;
  network: string;
  tokenServiceProvider: string;
  displayName: string;
  /** The card's last four digits. */
  lastDigits: string;
}

/** The network's risk verdict on a tokenization (10.3). */
export const NETWORK_VERDICTS = ['approve', 'require_verification', 'decline'] as const;
export type NetworkVerdictDecision = (typeof NETWORK_VERDICTS)[number];

export interface NetworkVerdict {
  decision: NetworkVerdictDecision;
  /** 1 (lowest risk) to 5. */
  riskScore?: number;
  /** Up to 10 of the network's codes, each 1 to 40 of `A-Z 0-9 _`. */
  reasons?: string[];
}

/** Body of the tokenization request (10.3), processor → gateway, `POST /upstream-notifications/processing/tokenizations`. */
export interface TokenizationRequest {
  /** Equal to `tokenization.id`. */
  id: string;
  type: 'tokenization.request';
  occurredAt: string;
  tokenization: {
    /** The processor's tokenization id: 1 to 100 visible ASCII; a retry carries the same one. */
    id: string;
    /** The reference the token will have (reserved before asking). */
    tokenReference: string;
    /** The card's cardKey. */
    cardId: string;
    walletProvider: WalletProvider;
    tokenRequestorId: string;
    last4: string;
    tokenExpDate: string;
    device: TokenDevice;
    networkVerdict: NetworkVerdict;
    at: string;
  };
}

/** The gateway's decline codes of a tokenization (10.3; docs/tokens.md, "The decision"). */
export const TOKENIZATION_DECLINE_REASONS = ['card_inactive', 'card_locked', 'wallet_provider_blocked', 'partner_declined', 'network_declined'] as const;
export type TokenizationDeclineReason = (typeof TOKENIZATION_DECLINE_REASONS)[number];

/** The gateway's 200 answer to a tokenization request (10.3). */
export type TokenizationAnswer =
  | { decision: 'approve' }
  | { decision: 'require_verification' }
  | { decision: 'decline'; declineReason: TokenizationDeclineReason };

/** Body of the verification request (10.4), processor → gateway, `POST /upstream-notifications/processing/tokenizations/verifications`. */
export interface VerificationRequest {
  /** Equal to `verification.id`. */
  id: string;
  type: 'tokenization.verification';
  occurredAt: string;
  verification: {
    /** The processor's id of this attempt: 1 to 100 visible ASCII; a retry carries the same one. */
    id: string;
    tokenReference: string;
    /** What the cardholder typed, 1 to 64 characters. A secret: never logged. */
    code: string;
  };
}

/** Why a verification failed (10.4). */
export const VERIFICATION_FAILURES = ['wrong_code', 'expired', 'attempts_exhausted', 'not_pending'] as const;
export type VerificationFailure = (typeof VERIFICATION_FAILURES)[number];

/** The gateway's 200 answer to a verification request (10.4); `attemptsLeft` 0 but for `wrong_code`. */
export type VerificationAnswer = { verified: true } | { verified: false; reason: VerificationFailure; attemptsLeft: number };

/** `change` of a `token.updated` notification (10.5). */
export const TOKEN_CHANGES = ['verification_required', 'activated', 'suspended', 'resumed', 'deactivated', 'declined', 'card_updated', 'device_updated'] as const;
export type TokenChange = (typeof TOKEN_CHANGES)[number];

/** A token lifecycle notification (10.5) on `POST /upstream-notifications/processing`; `token` as of that change. */
export type TokenNotification =
  | { id: string; type: 'token.created'; occurredAt: string; token: Token }
  | { id: string; type: 'token.updated'; occurredAt: string; change: TokenChange; reason?: string; token: Token };

/** The token operations (10.6): `POST /tokens/{tokenReference}/{operation}`. */
export const TOKEN_OPERATIONS = ['suspend', 'resume', 'deactivate'] as const;
export type TokenOperation = (typeof TOKEN_OPERATIONS)[number];

/** Body of a token operation (10.6), sent with the operation id as `Idempotency-Key`. */
export interface TokenOperationRequest {
  /** ≤ 200 characters. */
  reason?: string;
  /** Kept in the processor's history only. */
  requestedBy: 'partner' | 'card_state';
}

/** Body of `POST /cards/{cardKey}/tokens/move` (10.6), sent with the operation id as `Idempotency-Key`. */
export interface TokenMoveRequest {
  toCardKey: string;
  reason: 'replaced' | 'reissued';
}

/** Answer of `POST /cards/{cardKey}/tokens/move`: the tokens moved (each one `version` more). */
export interface TokenMoveResult {
  moved: Token[];
}

/** Answer of `GET /tokens?cardKey=` (10.7): every token of the card, newest first. */
export interface CardTokenList {
  data: Token[];
}

/** Answer of `GET /tokens/changes?after=&limit=` (10.7): the tokens changed since the cursor, each once, in their current state. */
export interface TokenChanges {
  data: Token[];
  nextCursor: string;
}

/** Body of the processing sandbox's control route `POST /__sandbox/tokenizations` (10.9, sandbox mode only). */
export interface SimulatedTokenization {
  cardId: string;
  walletProvider: WalletProvider;
  tokenRequestorId?: string;
  device?: TokenDevice;
  /** Default `approve`. */
  networkVerdict?: NetworkVerdictDecision;
  riskScore?: number;
  /** 1 to 100 visible ASCII; the same again on the same card is the processor's retry (the same token). */
  tokenizationId?: string;
  notify?: SandboxNotify;
}

/** Answer (201) of `POST /__sandbox/tokenizations`: the token made and what the gateway answered (`stand_in`: no usable answer). */
export interface SimulatedTokenizationResult {
  token: Token;
  decision: TokenizationAnswer | { decision: 'stand_in' };
}

/** Body of `POST /__sandbox/tokens/{tokenReference}/verify` (10.9). */
export interface SimulatedVerification {
  code: string;
}

/**
 * Answer of `POST /__sandbox/tokens/{tokenReference}/verify`: the gateway's answer (`reason`
 * `stand_in` when none was usable, the token unchanged) and the token after it.
 */
export interface SimulatedVerificationResult {
  verified: boolean;
  reason?: VerificationFailure | 'stand_in';
  attemptsLeft?: number;
  token: Token;
}

/** Body of `POST /__sandbox/tokens/{tokenReference}/network-status` (10.9): a change the network or the wallet made. */
export interface NetworkStatusSimulation {
  status: 'active' | 'suspended' | 'deactivated';
  reason?: string;
  notify?: SandboxNotify;
}

/** One entry of a token's processor-side history (`GET /__sandbox/tokens`). */
export interface ProcessorTokenHistoryEntry {
  status: TokenStatus;
  at: string;
  requestedBy?: 'partner' | 'card_state' | 'network' | 'gateway' | 'stand_in';
  reason?: string;
  /** Set on a move: the card the token moved to. */
  cardKey?: string;
}

/** A token as `GET /__sandbox/tokens` lists it: with its processor-side history and the operation ids it applied. */
export interface SandboxToken extends Token {
  history: ProcessorTokenHistoryEntry[];
  operationIds: string[];
}

/** The token of a purchase made with one (10.8): `authorization.token` of the authorization request. */
export interface AuthorizationToken {
  reference: string;
  walletProvider: WalletProvider;
}

/** Body of the authorization request (6.10, 10.8), processor → gateway, `POST /upstream-notifications/processing/authorizations`. */
export interface AuthorizationRequestBody {
  id: string;
  type: 'authorization.request';
  occurredAt: string;
  authorization: {
    id: string;
    transactionId: string;
    /** The card; for a purchase with a token, the card the processor holds for the token now. */
    cardId: string;
    amount: number;
    currency: string;
    type: 'PURCHASE' | 'WITHDRAWAL';
    merchant: { name: string; mcc: string; city: string; country: string };
    at: string;
    /** Only for a purchase made with a token. */
    token?: AuthorizationToken;
  };
}
