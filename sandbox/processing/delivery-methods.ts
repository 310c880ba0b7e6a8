import type { DeliveryMethod } from '../../contracts/upstreams';

/** One way of shipping a physical card to a country (contracts/upstreams.ts). */
export type { DeliveryMethod } from '../../contracts/upstreams';

/** Countries with their own carriers (mirrored in docs/upstreams.md). */
export const COUNTRY_DELIVERY_METHODS: Readonly<Record<string, readonly DeliveryMethod[]>> = {
  DE: [
    { id: 'de-dp-standard', type: 'postal', carrier: 'Deutsche Post', name: 'Standard letter', estimatedDays: 3, fee: 1.5, currency: 'EUR' },
    { id: 'de-dhl-express', type: 'courier', carrier: 'DHL Express', name: 'Express courier', estimatedDays: 1, fee: 14.9, currency: 'EUR' },
  ],
  FR: [
    { id: 'fr-laposte-standard', type: 'postal', carrier: 'La Poste', name: 'Lettre suivie', estimatedDays: 3, fee: 1.8, currency: 'EUR' },
    { id: 'fr-chronopost-express', type: 'courier', carrier: 'Chronopost', name: 'Chrono 13', estimatedDays: 1, fee: 15.5, currency: 'EUR' },
  ],
  NL: [
    { id: 'nl-postnl-standard', type: 'postal', carrier: 'PostNL', name: 'Brievenbuspakje', estimatedDays: 2, fee: 1.6, currency: 'EUR' },
    { id: 'nl-dhl-express', type: 'courier', carrier: 'DHL Express', name: 'Express courier', estimatedDays: 1, fee: 13.9, currency: 'EUR' },
  ],
  ES: [
    { id: 'es-correos-standard', type: 'postal', carrier: 'Correos', name: 'Carta certificada', estimatedDays: 4, fee: 2.2, currency: 'EUR' },
    { id: 'es-seur-express', type: 'courier', carrier: 'SEUR', name: 'SEUR 24', estimatedDays: 1, fee: 12.5, currency: 'EUR' },
  ],
  IT: [
    { id: 'it-posteitaliane-standard', type: 'postal', carrier: 'Poste Italiane', name: 'Raccomandata', estimatedDays: 5, fee: 2.5, currency: 'EUR' },
    { id: 'it-brt-express', type: 'courier', carrier: 'BRT', name: 'Express courier', estimatedDays: 2, fee: 12.9, currency: 'EUR' },
  ],
  GB: [
    { id: 'gb-royalmail-standard', type: 'postal', carrier: 'Royal Mail', name: 'Signed For 1st Class', estimatedDays: 2, fee: 2.4, currency: 'GBP' },
    { id: 'gb-dpd-express', type: 'courier', carrier: 'DPD', name: 'Next day courier', estimatedDays: 1, fee: 11.5, currency: 'GBP' },
  ],
  US: [
    { id: 'us-usps-standard', type: 'postal', carrier: 'USPS', name: 'First-Class Mail', estimatedDays: 5, fee: 1.2, currency: 'USD' },
    { id: 'us-fedex-express', type: 'courier', carrier: 'FedEx', name: 'Priority Overnight', estimatedDays: 1, fee: 29.0, currency: 'USD' },
  ],
};

/** Countries the issuer never ships cards to: the method list is empty. */
export const NO_DELIVERY_COUNTRIES: readonly string[] = ['KP', 'IR', 'SY', 'CU'];

/** The generic method for every other country. */
export const DEFAULT_DELIVERY_METHOD: DeliveryMethod = {
  id: 'intl-post-standard',
  type: 'postal',
  carrier: 'International Post',
  name: 'Standard international mail',
  estimatedDays: 10,
  fee: 4.5,
  currency: 'EUR',
};

/** Delivery methods for an upper-case ISO 3166-1 alpha-2 country code. */
export function deliveryMethodsFor(country: string): DeliveryMethod[] {
  if (NO_DELIVERY_COUNTRIES.includes(country)) return [];
  const specific = COUNTRY_DELIVERY_METHODS[country];
  return (specific ?? [DEFAULT_DELIVERY_METHOD]).map((m) => ({ ...m }));
}
