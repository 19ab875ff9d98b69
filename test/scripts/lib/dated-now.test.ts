import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { datedNow } from '../../../scripts/lib/dated-now.ts';
import { repoRoot } from '../../support/run-script.ts';
import { join } from 'node:path';

describe('datedNow', () => {
  const now = new Date('2027-06-01T12:00:00.000Z');

  it('moves every time by the same amount, the latest to now, keeping their order and distances', () => {
    const event = {
      event: 'comment.didCreate',
      data: {
        comment: { commentId: 'cm-7', createdAt: '2026-11-20T10:05:00.000Z', mentionees: [] },
        post: { postId: 'p-100', createdAt: '2026-11-20T10:00:00Z' },
        history: [{ at: '2026-11-20T09:00:00.5Z' }],
        text: 'not a time: 2026-11-20T10:00:00.000Z',
        count: 3,
        parentId: null,
      },
    };
    expect(datedNow(event, now)).to.deep.equal({
      event: 'comment.didCreate',
      data: {
        comment: { commentId: 'cm-7', createdAt: '2027-06-01T12:00:00.000Z', mentionees: [] },
        post: { postId: 'p-100', createdAt: '2027-06-01T11:55:00.000Z' },
        history: [{ at: '2027-06-01T10:55:00.500Z' }],
        text: 'not a time: 2026-11-20T10:00:00.000Z',
        count: 3,
        parentId: null,
      },
    });
  });

  it('leaves an event without times as it was', () => {
    const event = { event: 'user.didUpdate', data: { users: [{ userId: 'u-ana' }] } };
    expect(datedNow(event, now)).to.equal(event);
  });

  it('dates the shipped samples now', () => {
    for (const name of ['comment.json', 'post.json']) {
      const sample: unknown = JSON.parse(readFileSync(join(repoRoot, 'examples/events', name), 'utf8'));
      expect(JSON.stringify(datedNow(sample, now))).to.include('"createdAt":"2027-06-01T12:00:00.000Z"');
    }
  });
});
