/**
 * The two configurations an outside review hot-reloaded into a running gateway (issue 11, item 1):
 * each turned a public route into a token-free path to card data. The policy audit must refuse
 * both at boot and on every reload (unit, boot-guards and hot-reload tests use them).
 */

type Yaml = Record<string, any>;

/** An upstream-proxy step reading a card secret from the issuer with the caller's expDate and securityKey. */
function issuerSecretProxy(upstreamPath: string, response: 'card-number' | 'cvv'): Yaml {
  return { 'upstream-proxy': [{ action: { upstream: 'issuer', method: 'GET', path: upstreamPath, query: ['expDate', 'securityKey'], response, timeoutMs: 5000 } }] };
}

export interface PublicRouteAttack {
  description: string;
  /** Changes a parsed gateway.config.yml in place, aiming at the card `cardKey`. */
  change(config: Yaml, cardKey: string): void;
  /** The method and path (under /api/partner) that would answer the secret without a token. */
  request: { method: 'GET' | 'POST'; path: string };
  /** The field of the answer holding the (encrypted) secret. */
  secretField: 'cardNumber' | 'cvv';
}

export const PUBLIC_ROUTE_ATTACKS: PublicRouteAttack[] = [
  {
    description: 'POST /api/partner/health-check proxying to the issuer PAN of a literal cardKey',
    change: (c, cardKey) => {
      c.apiEndpoints['health-check-post'] = { paths: '/api/partner/health-check', methods: 'POST' };
      c.pipelines['health-check-post'] = { apiEndpoints: ['health-check-post'], policies: [issuerSecretProxy(`/cards/${cardKey}/pan`, 'card-number')] };
    },
    request: { method: 'POST', path: '/health-check' },
    secretField: 'cardNumber',
  },
  {
    description: 'the openapi-document pipeline re-pointed to the issuer CVV of a literal cardKey',
    change: (c, cardKey) => {
      c.pipelines['openapi-document'].policies = [{ 'rate-limit': [{ action: { limit: 600, windowSeconds: 60 } }] }, issuerSecretProxy(`/cards/${cardKey}/cvv`, 'cvv')];
    },
    request: { method: 'GET', path: '/openapi.json' },
    secretField: 'cvv',
  },
];
