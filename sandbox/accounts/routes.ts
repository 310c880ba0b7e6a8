import type { Router } from 'express';
import { isObjectId, newNumericId, newObjectId } from '../shared/ids';
import { queryParam, recordCap, type SandboxKit } from '../shared/sandbox-app';
import { upstreamError } from '../shared/sandbox-error';
import { compileSchemaValidator, type Checker } from '../shared/validation';
import { requestFingerprint } from '../shared/idempotency';
import type { CreateAccountRequest, UpstreamAccount } from '../../contracts/upstreams';
import { createAccountSchema } from './schemas';

/** `lastName` values that make `POST /accounts` misbehave on purpose (docs/upstreams.md). */
export const ACCOUNT_TRIGGERS = {
  fail: 'SANDBOX-FAIL',
  timeout: 'SANDBOX-TIMEOUT',
  reject: 'SANDBOX-REJECT',
  unavailable: 'SANDBOX-UNAVAILABLE',
  slow: 'SANDBOX-SLOW',
} as const;

/** Delay of the `SANDBOX-SLOW` trigger: slow, yet well inside any sane upstream timeout. */
export const SLOW_TRIGGER_MS = 1000;

/** `POST /accounts`'s body as the store reads it: the contract's fields it uses, every other one kept as received. */
type CreateAccountBody = Pick<CreateAccountRequest, 'partnerId' | 'onboardingId' | 'baasAccountClientId' | 'lastName'> & { [field: string]: unknown };

/** An account as answered by `GET /accounts/{accountId}` (contracts/upstreams.ts). */
export type Account = UpstreamAccount;

// Typed by its schema, checked against the upstream contract's type (contracts/upstreams.ts).
const checkCreateAccount: Checker<CreateAccountRequest & { [field: string]: unknown }> = compileSchemaValidator(createAccountSchema);

/**
 * The accounts of the account-creation proxy, in memory: at most `maxAccounts`; creating one
 * more evicts the oldest with its onboarding id, client id and request fingerprint (it answers
 * 404 `ACCOUNT_NOT_FOUND` from then on, and its onboarding id is free again).
 */
export class AccountStore {
  /** Oldest first (a Map keeps insertion order): the first entry is the next to evict. */
  private byId = new Map<string, Account>();
  private byOnboarding = new Map<string, Account>();
  private clientIds = new Set<string>();
  /** Fingerprint of the request that created each account (by onboardingId): a repeat of it answers the same account. */
  private requests = new Map<string, string>();

  constructor(readonly maxAccounts = recordCap(undefined, 'SANDBOX_MAX_ACCOUNTS')) {}

  get size(): number {
    return this.byId.size;
  }

  /** The fingerprint of the request that created the account of `onboardingId`. */
  requestOf(onboardingId: string): string | undefined {
    return this.requests.get(onboardingId);
  }

  create(body: CreateAccountBody, fingerprint = requestFingerprint('POST', '/accounts', body)): Account {
    const { partnerId, onboardingId, baasAccountClientId, ...individual } = body;
    let clientId = newNumericId(8);
    while (this.clientIds.has(clientId)) clientId = newNumericId(8);
    this.clientIds.add(clientId);
    const account: Account = {
      accountId: newObjectId(),
      clientId,
      status: 'CREATED',
      partnerId,
      onboardingId,
      baasAccountClientId: baasAccountClientId === undefined ? null : String(baasAccountClientId),
      individual,
      createdAt: new Date().toISOString(),
    };
    while (this.byId.size >= this.maxAccounts) this.evict(this.byId.keys().next().value!);
    this.byId.set(account.accountId, account);
    this.byOnboarding.set(onboardingId, account);
    this.requests.set(onboardingId, fingerprint);
    return account;
  }

  get(accountId: string): Account | undefined {
    return this.byId.get(accountId);
  }

  findByOnboarding(onboardingId: string): Account | undefined {
    return this.byOnboarding.get(onboardingId);
  }

  list(): Account[] {
    return [...this.byId.values()];
  }

  clear(): void {
    this.byId.clear();
    this.byOnboarding.clear();
    this.clientIds.clear();
    this.requests.clear();
  }

  private evict(accountId: string): void {
    const account = this.byId.get(accountId);
    if (!account) return;
    this.byId.delete(accountId);
    this.byOnboarding.delete(account.onboardingId);
    this.requests.delete(account.onboardingId);
    this.clientIds.delete(account.clientId);
  }
}

/** Mounts the account-creation proxy's API on `router`. */
export function mountAccountRoutes(router: Router, accounts: AccountStore, kit: SandboxKit): void {
  router.post('/accounts', (req, res, next) => {
    const body = checkCreateAccount(req.body);
    switch (body.lastName) {
      case ACCOUNT_TRIGGERS.fail:
        throw upstreamError('ACCOUNT_CREATION_FAILED', 'Account creation failed (sandbox trigger SANDBOX-FAIL)');
      case ACCOUNT_TRIGGERS.timeout:
        kit.hang(res);
        return;
      case ACCOUNT_TRIGGERS.reject:
        throw upstreamError('ACCOUNT_REJECTED', 'The individual was rejected by compliance screening (sandbox trigger SANDBOX-REJECT)');
      case ACCOUNT_TRIGGERS.unavailable:
        throw upstreamError('SERVICE_UNAVAILABLE', 'Account service unavailable (sandbox trigger SANDBOX-UNAVAILABLE)');
    }
    // The onboardingId is the operation id (docs/upstreams.md 4.1): a repeat of the same request
    // answers the account it created; the same onboardingId with another body is 409.
    const fingerprint = requestFingerprint('POST', '/accounts', req.body);
    const existing = accounts.findByOnboarding(body.onboardingId);
    if (existing) {
      if (accounts.requestOf(body.onboardingId) === fingerprint) {
        res.set('Idempotent-Replayed', 'true');
        res.status(201).json({ accountId: existing.accountId, clientId: existing.clientId, status: existing.status });
        return;
      }
      throw upstreamError('DUPLICATE_ONBOARDING', `Onboarding ${body.onboardingId} already has account ${existing.accountId}`);
    }
    const answer = (): void => {
      if (res.destroyed) return;
      // A repeat may have created it meanwhile (SANDBOX-SLOW): one account per onboardingId.
      const account = accounts.findByOnboarding(body.onboardingId) ?? accounts.create(body, fingerprint);
      res.status(201).json({ accountId: account.accountId, clientId: account.clientId, status: account.status });
    };
    if (body.lastName === ACCOUNT_TRIGGERS.slow) {
      const timer = setTimeout(() => {
        try {
          answer();
        } catch (err) {
          next(err);
        }
      }, SLOW_TRIGGER_MS);
      res.on('close', () => clearTimeout(timer));
      return;
    }
    answer();
  });

  router.get('/accounts', (req, res) => {
    const onboardingId = queryParam(req, 'onboardingId');
    if (!onboardingId) {
      throw upstreamError('VALIDATION_ERROR', 'Invalid request: ?onboardingId is required', [
        { path: '?onboardingId', message: 'is required' },
      ]);
    }
    const account = accounts.findByOnboarding(onboardingId);
    res.json({ data: account ? [account] : [] });
  });

  router.get('/accounts/:accountId', (req, res) => {
    const account = isObjectId(req.params.accountId) ? accounts.get(req.params.accountId) : undefined;
    if (!account) throw upstreamError('ACCOUNT_NOT_FOUND', `No account ${req.params.accountId}`);
    res.json(account);
  });
}
