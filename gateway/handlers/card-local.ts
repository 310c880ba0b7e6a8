import { recordAudit } from '../audit/audit-log';
import { CARD_COLUMNS, toCard, type CardRow } from '../cards/card-store';
import { GatewayError } from '../errors';
import { emitEvent } from '../outbox/partner-events';
import { cardUpdated } from './card-operations';
import { auditActionOf, type HandlerBuild, type HandlerServices } from './services';
import type { BodyFacts, OperationHandler, OwnerFacts } from './context';

/**
 * A local-only change of a card field (nickname, 3DS phone): one transaction updates the record
 * and writes the audit entry and the `card.updated` event; the answer is the full card. No upstream
 * is called.
 */
function setLocalField<Field extends 'nickname' | 'phoneNumber'>(
  column: 'nickname' | 'three_ds_phone',
  bodyField: Field,
  eventField: 'nickname' | 'threeDsPhone'
): (services: HandlerServices, build: HandlerBuild) => OperationHandler<OwnerFacts<'card'> & BodyFacts<Record<Field, string>>> {
  return function setLocalFieldFactory({ db }, build) {
    const operation = auditActionOf(build);
    return async function setLocalFieldHandler({ ownership: owner, body }, req, res) {
      const value = body[bodyField];
      const card = await db.transaction(async (tx) => {
        const rows = await tx.query<CardRow>(`UPDATE cards SET ${column} = $2, updated_at = now() WHERE card_key = $1 RETURNING ${CARD_COLUMNS}`, [owner.id, value]);
        if (rows.rowCount === 0) throw new GatewayError('not_found', 'No card has this cardKey');
        await recordAudit(tx, {
          partnerId: owner.partnerId,
          individualId: owner.individualId,
          tenantId: owner.tenantId,
          operation,
          targetType: 'card',
          targetId: owner.id,
          requestId: req.requestId,
          outcome: 'success',
        });
        const card = toCard(rows.rows[0]);
        await emitEvent(tx, cardUpdated(owner, req, card, [eventField]));
        return card;
      });
      return { status: 200, body: card };
    };
  };
}

/** `PATCH /cards/{id}/nickname` (local only, ≤ 64 characters). */
export const setCardNickname = setLocalField('nickname', 'nickname', 'nickname');
/** `PUT /cards/{id}/3ds/phone` (local only, ≤ 32 characters). */
export const setCard3dsPhone = setLocalField('three_ds_phone', 'phoneNumber', 'threeDsPhone');
