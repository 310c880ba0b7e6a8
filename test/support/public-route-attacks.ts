/**
 * The two configurations an outside review hot-reloaded into a running gateway (issue 11, item 1):
 * each turned a public route into a token-free path to card data. Upstream paths now live in the
 * operation catalog, so a YAML can no longer name a literal card key: the attacks end a public
 * route in a card-secret operation instead. The policy audit (public route shape) and the catalog
 * guard (the pipeline contradicts its operation's entry) must refuse both at boot and on every
 * reload (unit, boot-guards and hot-reload tests use them).
 */

type Yaml = Record<string, any>;

/** An operation step reading a card secret from the issuer with the caller's expDate and securityKey. */
function cardSecretOperation(name: 'get-card-pan' | 'get-card-cvv'): Yaml {
  return { operation: [{ action: { name, timeoutMs: 5000 } }] };
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

/** The catalog guard's refusal of either attack: the public route is not the card-secret operation's route. */
export const ATTACK_CONTRADICTION = /pipeline "[^"]+", operation "get-card-(pan|cvv)": apiEndpoint "[^"]+" is (GET|POST) \/api\/partner\/[a-z.-]+; the operation is GET \/api\/partner\/cards\/:id\/(pan|cvv)/;

export const PUBLIC_ROUTE_ATTACKS: PublicRouteAttack[] = [
  {
    description: 'POST /api/partner/health-check ending in the issuer PAN read',
    change: (c) => {
      c.apiEndpoints['health-check-post'] = { paths: '/api/partner/health-check', methods: 'POST' };
      c.pipelines['health-check-post'] = { apiEndpoints: ['health-check-post'], policies: [cardSecretOperation('get-card-pan')] };
    },
    request: { method: 'POST', path: '/health-check' },
    secretField: 'cardNumber',
  },
  {
    description: 'the openapi-document pipeline re-pointed to the issuer CVV read',
    change: (c) => {
      c.pipelines['openapi-document'].policies = [{ 'rate-limit': [{ action: { limit: 600, windowSeconds: 60 } }] }, cardSecretOperation('get-card-cvv')];
    },
    request: { method: 'GET', path: '/openapi.json' },
    secretField: 'cvv',
  },
];
