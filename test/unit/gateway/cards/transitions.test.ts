import { expect } from 'chai';
import { OPERATION_NAMES, OPERATIONS, type Operation } from '../../../../gateway/catalog';
import { STATUS_CHANGES } from '../../../../gateway/cards/transitions';
import { cardStatusOf } from '../../../../gateway/cards/card-status';
import { HANDLERS, handlerOf } from '../../../../gateway/handlers';
import { changeCardStatus } from '../../../../gateway/handlers/card-operations';

describe('unit: cards/transitions (status changes, referenced by their catalog entries)', () => {
  const changing = OPERATION_NAMES.filter((name) => (OPERATIONS[name] as Operation).statusChange !== undefined);

  it('each status change is referenced by exactly one catalog entry, and exactly those entries end in the status-change handler', () => {
    expect(changing.map((name) => (OPERATIONS[name] as Operation).statusChange).sort((a, b) => a!.issuerAction.localeCompare(b!.issuerAction))).to.deep.equal(
      Object.values(STATUS_CHANGES).sort((a, b) => a.issuerAction.localeCompare(b.issuerAction))
    );
    for (const change of Object.values(STATUS_CHANGES)) expect(changing.filter((name) => (OPERATIONS[name] as Operation).statusChange === change), change.issuerAction).to.have.length(1);
    const handled = Object.entries(HANDLERS)
      .filter(([, factory]) => factory === changeCardStatus)
      .map(([name]) => name);
    expect(handled.sort()).to.deep.equal([...changing].sort());
    for (const name of changing) expect(handlerOf(name as keyof typeof HANDLERS)).to.equal(changeCardStatus);
  });

  it('sends the issuer the action its route names, sets the code whose CardStatus it announces, and audits under the catalog entry', () => {
    for (const name of changing) {
      const entry: Operation = OPERATIONS[name];
      const change = entry.statusChange!;
      // The route's last segment is the issuer action (restrict/lost → lost, temporary-lock → temporary-lock).
      expect(entry.path.split('/').pop(), name).to.equal(change.issuerAction);
      expect(cardStatusOf(change.to), name).to.equal(change.status);
      expect(entry.audit, name).to.match(/^card\.[a-z.-]+$/);
      // S4 (CLOSED) is final: no status change starts from it.
      expect(change.from, name).to.not.include('S4');
    }
  });

  it('keys each status change by its issuer action', () => {
    for (const [action, change] of Object.entries(STATUS_CHANGES)) expect(change.issuerAction).to.equal(action);
    expect(OPERATIONS['lock-card'].statusChange).to.equal(STATUS_CHANGES.lock);
    expect(STATUS_CHANGES.lock.to).to.equal('L1');
  });
});
