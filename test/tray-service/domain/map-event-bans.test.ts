import { expect } from 'chai';
import { mapEvent } from '../../../tray-service/domain/map-event.ts';
import { banEvent } from '../bans/ban-events.ts';

const receivedAt = Date.parse('2026-11-20T12:00:00.000Z');
const createdAt = '2026-11-20T11:00:00.000Z';

// The mapping of global bans alone (no I/O); queue -> worker -> API is in bans/global-bans.test.ts.
describe('mapEvent: user.didGlobalBan and user.didGlobalUnban', () => {
  it('maps a ban to one change per distinct user, dated by createdAt, not by receipt', () => {
    const mapped = mapEvent({ ...banEvent('ban', ['u-eve', 'u-fay', 'u-eve'], createdAt), receivedAt });
    expect(mapped).to.deep.include({ status: 'applied', activities: [], memberships: [], profiles: [] });
    expect(mapped.bans).to.deep.equal([
      { userId: 'u-eve', banned: true, at: Date.parse(createdAt) },
      { userId: 'u-fay', banned: true, at: Date.parse(createdAt) },
    ]);
  });

  it('maps an unban to a change that lifts the ban', () => {
    expect(mapEvent({ ...banEvent('unban', ['u-eve'], createdAt), receivedAt }).bans).to.deep.equal([
      { userId: 'u-eve', banned: false, at: Date.parse(createdAt) },
    ]);
  });

  it('reports a ban without createdAt or without users as invalid, naming the field', () => {
    const noTime = banEvent('ban', ['u-eve'], createdAt);
    delete noTime.data.createdAt;
    expect(mapEvent({ ...noTime, receivedAt })).to.deep.include({
      status: 'invalid',
      error: 'data.createdAt: Invalid input: expected string, received undefined',
    });
    const nobody = mapEvent({ ...banEvent('unban', [], createdAt), receivedAt });
    expect(nobody.status).to.equal('invalid');
    expect(nobody.error).to.match(/^data\.userIds: /);
    expect(nobody.bans).to.equal(undefined);
  });

  it('gives no ban change for any other event', () => {
    expect(
      mapEvent({
        event: 'user.didUpdate',
        data: { users: [{ userId: 'u-eve', displayName: 'Eve' }] },
        receivedAt,
      }).bans,
    ).to.equal(undefined);
  });
});
