import { recordAudit } from '../audit/audit-log';
import { readSpendControls, saveSpendControls, type SpendControls } from '../authorizations/spend-controls';
import { CARD_COLUMNS, toCard, type CardRow } from '../cards/card-store';
import { GatewayError } from '../errors';
import { emitEvent } from '../outbox/partner-events';
import { cardAudit, cardUpdated } from './card-operations';
import { auditActionOf, type HandlerBuild, type HandlerServices } from './services';
import type { BodyFacts, OperationHandler, OwnerFacts, PartnerFacts } from './context';

/**
 * Spend controls (docs/spend-controls.md): a card's own (`/cards/{id}/spend-controls`, the card's
 * ownership checked by the pipeline) and the partner's default (`/spend-controls`). Answered from
 * PostgreSQL; a PUT replaces the whole object (`{}` clears it) in one transaction with its audit
 * entry and, for a card, its `card.updated` event.
 */

/** The audit entry's details of a change: the controls as stored (no secret in them), `{}` when cleared. */
const detailsOf = (stored: SpendControls) => ({ controls: JSON.stringify(stored) });

/** `GET /cards/{id}/spend-controls`: the card's own controls, `{}` when none. */
export function getCardSpendControls({ db }: HandlerServices): OperationHandler<OwnerFacts<'card'>> {
  return async function getCardSpendControlsHandler({ ownership: owner }, _req, res) {
    return { status: 200, body: await readSpendControls(db, owner.partnerId, owner.id) };
  };
}

/** `PUT /cards/{id}/spend-controls`: replaces the card's controls; audit entry (target the card) and `card.updated` `changed: ["spendControls"]`. */
export function setCardSpendControls({ db }: HandlerServices, build: HandlerBuild): OperationHandler<OwnerFacts<'card'> & BodyFacts<SpendControls>> {
  const operation = auditActionOf(build);
  return async function setCardSpendControlsHandler({ ownership: owner, body }, req, res) {
    const stored = await db.transaction(async (tx) => {
      // FOR KEY SHARE: a replacement cannot move the card to another cardKey while this writes.
      const rows = await tx.query<CardRow>(`SELECT ${CARD_COLUMNS} FROM cards WHERE card_key = $1 FOR KEY SHARE`, [owner.id]);
      if (rows.rowCount === 0) throw new GatewayError('not_found', 'No card has this cardKey');
      const saved = await saveSpendControls(tx, owner.partnerId, owner.id, body);
      await recordAudit(tx, { ...cardAudit(owner, req, operation), outcome: 'success', details: detailsOf(saved) });
      await emitEvent(tx, cardUpdated(owner, req, toCard(rows.rows[0]), ['spendControls']));
      return saved;
    });
    return { status: 200, body: stored };
  };
}

/** `GET /spend-controls`: the partner's default, `{}` when none. */
export function getSpendControls({ db }: HandlerServices): OperationHandler<PartnerFacts> {
  return async function getSpendControlsHandler({ partner }, _req, res) {
    return { status: 200, body: await readSpendControls(db, partner._id, null) };
  };
}

/** `PUT /spend-controls`: replaces the partner's default; audit entry with target type `partner` (no event: no card changed). */
export function setSpendControls({ db }: HandlerServices, build: HandlerBuild): OperationHandler<PartnerFacts & BodyFacts<SpendControls>> {
  const operation = auditActionOf(build);
  return async function setSpendControlsHandler({ partner, body }, req, res) {
    const partnerId = partner._id;
    const stored = await db.transaction(async (tx) => {
      const saved = await saveSpendControls(tx, partnerId, null, body);
      await recordAudit(tx, { partnerId, operation, targetType: 'partner', targetId: partnerId, requestId: req.requestId, outcome: 'success', details: detailsOf(saved) });
      return saved;
    });
    return { status: 200, body: stored };
  };
}
