import { COUNTRY, type JsonSchema } from './common';
import { WALLET_PROVIDERS } from '../shapes/token';

const id = (name: string) => `https://partner-gateway.dev/schemas/${name}.json`;

/** The rolling windows a velocity rule counts over, and their length in seconds. */
export const VELOCITY_WINDOWS = { '1h': 3600, '24h': 86_400, '7d': 7 * 86_400, '30d': 30 * 86_400 } as const;
export type VelocityWindow = keyof typeof VELOCITY_WINDOWS;

/** The bounds of a spend-controls object (docs/spend-controls.md). */
export const SPEND_CONTROL_LIMITS = {
  /** Distinct MCCs in one list (there are fewer than 1,000 assigned MCCs; 200 is a long product list). */
  mccs: 200,
  /** Distinct countries in one list: every ISO 3166-1 alpha-2 code fits (249 assigned). */
  countries: 250,
  /** Velocity rules. */
  velocityRules: 4,
  /** The largest amount (maximum per transaction, velocity amount), in the card currency. */
  amount: 1_000_000_000,
  /** The largest count of a velocity rule. */
  count: 1_000_000,
} as const;

/** A positive amount in the card currency, at most 2 decimals. */
const AMOUNT = { type: 'number', exclusiveMinimum: 0, maximum: SPEND_CONTROL_LIMITS.amount, 'x-max-decimals': 2, description: 'In the card currency: positive, at most 2 decimals' } as const;
const MCC = { type: 'string', pattern: '^[0-9]{4}$', description: 'Merchant category code (ISO 18245), 4 digits' } as const;
const mccList = (minItems: number, description: string) => ({ type: 'array', minItems, maxItems: SPEND_CONTROL_LIMITS.mccs, uniqueItems: true, items: MCC, description }) as const;
const walletList = (minItems: number, description: string) =>
  ({ type: 'array', minItems, maxItems: WALLET_PROVIDERS.length, uniqueItems: true, items: { type: 'string', enum: WALLET_PROVIDERS }, description }) as const;
const countryList = (minItems: number, description: string) =>
  ({ type: 'array', minItems, maxItems: SPEND_CONTROL_LIMITS.countries, uniqueItems: true, items: { ...COUNTRY, description: 'ISO 3166-1 alpha-2, upper case' }, description }) as const;

/**
 * The spend controls of a card, or the partner's default for all its cards (`PUT /cards/{id}/spend-controls`,
 * `PUT /spend-controls`): the whole object, every field optional; `{}` clears them. An allow list
 * admits only what it names, so an empty one (which would refuse every purchase) is refused: leave
 * it out to allow everything.
 */
export const spendControls = {
  $id: id('spend-controls'),
  type: 'object',
  additionalProperties: false,
  properties: {
    maxAmountPerTransaction: { ...AMOUNT, description: 'A purchase above it is declined (`amount_exceeded`); in the card currency, at most 2 decimals' },
    allowedMccs: mccList(1, `Only these merchant categories are allowed (\`mcc_blocked\` otherwise); 1 to ${SPEND_CONTROL_LIMITS.mccs}`),
    blockedMccs: mccList(0, `These merchant categories are declined (\`mcc_blocked\`); at most ${SPEND_CONTROL_LIMITS.mccs}`),
    allowedCountries: countryList(1, `Only merchants in these countries are allowed (\`country_blocked\` otherwise); 1 to ${SPEND_CONTROL_LIMITS.countries}`),
    blockedCountries: countryList(0, `Merchants in these countries are declined (\`country_blocked\`); at most ${SPEND_CONTROL_LIMITS.countries}`),
    allowedWalletProviders: walletList(1, 'Only tokens of these wallets may be made (tokenizations) and used (purchases): `wallet_provider_blocked` otherwise; 1 to 4 distinct. A purchase with the card itself passes'),
    blockedWalletProviders: walletList(0, 'Tokens of these wallets are declined (`wallet_provider_blocked`), for tokenizations and purchases; at most 4 distinct'),
    velocity: {
      type: 'array',
      maxItems: SPEND_CONTROL_LIMITS.velocityRules,
      description: `At most ${SPEND_CONTROL_LIMITS.velocityRules} rules, each over a rolling window of the card's approved authorizations (\`velocity_exceeded\`)`,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['window'],
        properties: {
          window: { type: 'string', enum: Object.keys(VELOCITY_WINDOWS) as VelocityWindow[], description: 'The rolling window: the last hour, 24 hours, 7 days or 30 days' },
          maxCount: { type: 'integer', minimum: 1, maximum: SPEND_CONTROL_LIMITS.count, description: 'At most this many approved authorizations in the window' },
          maxAmount: { ...AMOUNT, description: 'At most this much authorized in the window, in the card currency' },
        },
        // A rule must limit something: an empty rule is refused, naming both fields.
        anyOf: [{ required: ['maxCount'] }, { required: ['maxAmount'] }],
      },
    },
  },
} as const satisfies JsonSchema;
