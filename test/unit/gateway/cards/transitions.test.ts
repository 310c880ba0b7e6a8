import { expect } from 'chai';
import { operationNamed } from '../../../../gateway/catalog';
import { STATUS_CHANGES, statusChangeOf } from '../../../../gateway/cards/transitions';
import { cardStatusOf } from '../../../../gateway/cards/card-status';
import { HANDLERS } from '../../../../gateway/handlers';
import { changeCardStatus } from '../../../../gateway/handlers/card-operations';

describe('unit: cards/transitions (status changes by operation name)', () => {
  it('has a status change for exactly the operations whose handler changes a card status', () => {
    const changing = Object.entries(HANDLERS)
      .filter(([, factory]) => factory === changeCardStatus)
      .map(([name]) => name);
    expect(changing.sort()).to.deep.equal(Object.keys(STATUS_CHANGES).sort());
  });

  it('sends the issuer the action its route names, sets the code whose CardStatus it announces, and audits under the catalog entry', () => {
    for (const [name, change] of Object.entries(STATUS_CHANGES)) {
      const entry = operationNamed(name)!;
      // The route's last segment is the issuer action (restrict/lost → lost, temporary-lock → temporary-lock).
      expect(entry.path.split('/').pop(), name).to.equal(change.issuerAction);
      expect(cardStatusOf(change.to), name).to.equal(change.status);
      expect(entry.audit, name).to.match(/^card\.[a-z.-]+$/);
      // S4 (CLOSED) is final: no status change starts from it.
      expect(change.from, name).to.not.include('S4');
    }
  });

  it('refuses, when a pipeline is built, an operation that changes no status', () => {
    expect(() => statusChangeOf('set-card-nickname')).to.throw(/set-card-nickname is not a status change/);
    expect(statusChangeOf('lock-card').to).to.equal('L1');
  });
});
