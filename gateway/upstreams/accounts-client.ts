import { mapUpstreamFailure } from './failures';
import type { UpstreamHttpClient } from './http-client';
import type { AccountList, CreateAccountRequest, CreatedAccount, UpstreamAccount } from '../../contracts/upstreams';
import type { CallContext } from './call-context';

/** Typed client of the account-creation proxy (docs/upstreams.md section 4). */
export interface AccountsClient {
  /** `POST /accounts` (4.1): 201 `{ accountId, clientId, status }`; 409 `DUPLICATE_ONBOARDING` → `conflict`. */
  createAccount(ctx: CallContext, body: CreateAccountRequest): Promise<CreatedAccount>;
  /**
   * `GET /accounts?onboardingId=` (4.3): the account of an onboarding, or `undefined`. Lets a
   * handler reconcile after a `POST /accounts` that timed out.
   */
  findByOnboardingId(ctx: CallContext, onboardingId: string): Promise<UpstreamAccount | undefined>;
}

/** Members of an account the gateway never reads, so never checked for card data (docs/cards.md). */
const UNREAD = ['individual'] as const;

/** Builds the accounts client on the shared HTTP client of that upstream. */
export function createAccountsClient(http: UpstreamHttpClient): AccountsClient {
  return {
    createAccount: async (ctx, body) => http.request<CreatedAccount>(ctx, { method: 'POST', path: '/accounts', body }),
    async findByOnboardingId(ctx, onboardingId) {
      const list = await http.request<AccountList>(ctx, { method: 'GET', path: '/accounts', query: { onboardingId }, unread: UNREAD });
      // The contract promises `{ data: [] }`; anything else is an unusable answer, not "no account".
      if (!Array.isArray(list?.data)) throw mapUpstreamFailure('accounts', { kind: 'malformed' });
      return list.data[0];
    },
  };
}
