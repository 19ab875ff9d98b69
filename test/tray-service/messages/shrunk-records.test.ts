import { expect } from 'chai';
import { createMessageRenderer } from '../../../tray-service/messages/create-message-renderer.ts';
import { aComment } from '../../support/activity-builder.ts';
import { NOW, personal, POST, RETENTION, T } from '../../support/reference-tray/model-operations.ts';
import { liveRecords } from '../../support/reference-tray/reference-tray-reads.ts';
import { ReferenceTray } from '../../support/reference-tray/reference-tray.ts';

const locales = ['en', 'de', 'es', 'fr', 'ja', 'pt-BR', 'ru', 'th'];
const people = ['Benedikt', 'Cyrille', 'Dorotea'];

/** Ana's comment record had only the first `count` people commented. */
function neverHadMore(count: number) {
  const tray = new ReferenceTray(RETENTION);
  tray.apply(personal(comments().slice(0, count)));
  const [record] = liveRecords(tray, 'u-ana', NOW + 100);
  return record;
}

const comments = () =>
  people.map((name, i) =>
    aComment(`u-${i}`, POST, { id: `cm-${i}`, at: T + i * 60_000, name, segment: i + 1 }),
  );

/** Ana's comment record after each removal (docs/tray-rules.md#inbox): 3 actors, then 2, then 1. */
function shrinking(): { record: ReturnType<typeof liveRecords>[number]; gone: string[] }[] {
  const tray = new ReferenceTray(RETENTION);
  tray.apply(personal(comments()));
  const states = [];
  // The newest goes first: each removal takes the record's last action away.
  for (let removed = 0; removed < people.length; removed++) {
    const [record] = liveRecords(tray, 'u-ana', NOW + 100);
    if (record) states.push({ record, gone: people.slice(people.length - removed) });
    const i = people.length - 1 - removed;
    tray.apply({
      kind: 'removal',
      removals: [{ kind: 'comment', id: `cm-${i}`, postId: POST.postId, at: NOW + i }],
      now: NOW + 10 + removed,
    });
  }
  expect(liveRecords(tray, 'u-ana', NOW + 100)).to.deep.equal([]);
  return states;
}

describe('messages of a record a removal shrank, in every shipped locale', () => {
  const renderer = createMessageRenderer({ defaultLocale: 'en' });
  const states = shrinking();

  it('shrinks 3 -> 2 -> 1, its last action the newest that remains', () => {
    expect(states.map(({ record }) => [record.actorsCount, record.lastActionId])).to.deep.equal([
      [3, 'cm-2'],
      [2, 'cm-1'],
      [1, 'cm-0'],
    ]);
  });

  for (const locale of locales)
    it(`${locale}: names the newest actor left and never a removed one`, () => {
      for (const { record, gone } of states) {
        const text = renderer.render(record, locale);
        expect(text, `${record.actorsCount} actor(s)`).to.include(record.actors[0]?.name);
        for (const name of gone) expect(text, `${record.actorsCount} actor(s)`).not.to.include(name);
        // The same message as a record that only ever had the actors left.
        const never = neverHadMore(record.actorsCount);
        expect(never?.lastActionId).to.equal(record.lastActionId);
        expect(text).to.equal(renderer.render(never!, locale));
      }
    });
});
