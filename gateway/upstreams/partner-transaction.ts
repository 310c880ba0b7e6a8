/** A processing-system transaction as partners see it (`GET /individual/accounts/{id}/transactions` items, `transaction.created` events). */
export interface PartnerTransaction {
  _id: string;
  cardKey: string;
  amount: number;
  currency: string;
  type: string;
  status: string;
  merchant: { name: string; mcc: string; city: string; country: string };
  createdAt: string;
}

/**
 * The partner's view of a transaction the processing system answered, notified or recorded for a
 * simulation: only the documented fields (an upstream's extra fields, a decline's internal
 * details, never reach the partner). The transactions list, the `transaction.created` event and
 * the simulation's answer all use it, so the three cannot differ.
 */
export function toPartnerTransaction(t: Omit<PartnerTransaction, '_id' | 'cardKey'> & { id: string; cardId: string }): PartnerTransaction {
  return {
    _id: t.id,
    cardKey: t.cardId,
    amount: t.amount,
    currency: t.currency,
    type: t.type,
    status: t.status,
    merchant: { name: t.merchant.name, mcc: t.merchant.mcc, city: t.merchant.city, country: t.merchant.country },
    createdAt: t.createdAt,
  };
}
