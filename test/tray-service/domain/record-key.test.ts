import { isDeepStrictEqual } from 'node:util';
import { expect } from 'chai';
import fc from 'fast-check';
import { trayVerbs } from '../../../tray-service/domain/tray-verb.ts';
import {
  decodeRecordKey,
  encodeRecordKey,
  type RecordIdentity,
} from '../../../tray-service/domain/record-key.ts';
import { recordKey } from '../../../tray-service/domain/activity.ts';

const RUNS = 2_000;

/** The pieces ids are made of: the two escaped characters, their escapes, separators, unicode, blanks. */
const piece = fc.constantFrom(
  '_',
  '%',
  '%5F',
  '%25',
  '%5f',
  '%2',
  '5F',
  ':',
  '/',
  '#',
  ' ',
  '\t',
  '\n',
  '\u00a0',
  '\u200b',
  '\u0000',
  'a',
  'Z',
  '0',
  'é',
  'ß',
  '日本',
  '😀',
  'u-ana',
);

/** Any id a platform might send, weighted towards the characters the key must keep apart. */
const anyId = fc.oneof(
  fc.string({ unit: piece, maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom('', ' ', '_', '__', '%', '%5F', '%25', 'null', 'undefined', '0'),
);

const anyVerb = fc.oneof(fc.constantFrom(...trayVerbs), anyId);

// Plain objects: fast-check may otherwise give a record a null prototype, which no key can tell.
const anyIdentity = fc.record({ verb: anyVerb, targetId: anyId, userId: anyId }, { noNullPrototype: true });

/** Ids with neither `_` nor `%`: the ones whose key is the contract's plain join. */
const plainId = fc
  .string({ unit: fc.constantFrom('a', 'Z', '0', '-', ':', '/', '.', ' ', 'é', '😀'), maxLength: 10 })
  .filter((id) => !/[_%]/.test(id));

/**
 * Two identities whose parts joined with `_` read the same: `_`-free pieces joined with `_` and cut at
 * two different `_` into (target, user). The plain join could not tell them apart.
 */
const sameJoinPair = fc
  .record({
    verb: fc.constantFrom(...trayVerbs),
    pieces: fc.array(plainId, { minLength: 3, maxLength: 6 }),
  })
  .chain(({ verb, pieces }) =>
    fc
      .uniqueArray(fc.integer({ min: 1, max: pieces.length - 1 }), { minLength: 2, maxLength: 2 })
      .map(([first = 0, second = 0]): [RecordIdentity, RecordIdentity] => {
        const cut = (at: number): RecordIdentity => ({
          verb,
          targetId: pieces.slice(0, at).join('_'),
          userId: pieces.slice(at).join('_'),
        });
        return [cut(first), cut(second)];
      }),
  );

describe('record key (docs/contract.md#tray-records)', () => {
  it('decodes every key back to the verb, target id and user id it was made from', () => {
    fc.assert(
      fc.property(anyIdentity, (identity) => {
        expect(decodeRecordKey(encodeRecordKey(identity))).to.deep.equal(identity);
      }),
      { numRuns: RUNS },
    );
  });

  it('gives two different (verb, target, user) triples two different keys', () => {
    fc.assert(
      fc.property(anyIdentity, anyIdentity, (a, b) => {
        if (isDeepStrictEqual(a, b)) return;
        expect(encodeRecordKey(a)).to.not.equal(encodeRecordKey(b));
      }),
      { numRuns: RUNS },
    );
  });

  it('gives different keys to triples whose plain `_` joins are the same', () => {
    fc.assert(
      fc.property(sameJoinPair, ([a, b]) => {
        expect(`${a.verb}_${a.targetId}_${a.userId}`).to.equal(`${b.verb}_${b.targetId}_${b.userId}`);
        expect(encodeRecordKey(a)).to.not.equal(encodeRecordKey(b));
      }),
      { numRuns: RUNS },
    );
  });

  it('is exactly `${verb}_${targetId}_${userId}` when no part contains `_` or `%`', () => {
    fc.assert(
      fc.property(fc.constantFrom(...trayVerbs), plainId, plainId, (verb, targetId, userId) => {
        expect(encodeRecordKey({ verb, targetId, userId })).to.equal(`${verb}_${targetId}_${userId}`);
      }),
      { numRuns: RUNS },
    );
  });

  it('always has exactly two unescaped `_`, the separators', () => {
    fc.assert(
      fc.property(anyIdentity, (identity) => {
        expect(encodeRecordKey(identity).split('_')).to.have.length(3);
      }),
      { numRuns: RUNS },
    );
  });

  it('writes `_` as %5F and `%` as %25 within a part', () => {
    expect(encodeRecordKey({ verb: 'post', targetId: 'c1_alice', userId: 'smith' })).to.equal(
      'post_c1%5Falice_smith',
    );
    expect(encodeRecordKey({ verb: 'post', targetId: 'c1', userId: 'alice_smith' })).to.equal(
      'post_c1_alice%5Fsmith',
    );
    expect(encodeRecordKey({ verb: 'comment', targetId: '100%', userId: '%5F' })).to.equal(
      'comment_100%25_%255F',
    );
  });

  it('refuses text no identity encodes to: a wrong number of parts or an unknown escape', () => {
    for (const text of ['post_c1', 'post_c1_alice_smith', 'post_c1%_u', 'post_c1%5f_u', 'post_%41_u', '']) {
      expect(decodeRecordKey(text), text).to.equal(undefined);
    }
  });

  it('is the key the worker gives a record (recordKey)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...trayVerbs), anyId, anyId, (verb, targetId, userId) => {
        expect(recordKey(verb, targetId, userId)).to.equal(encodeRecordKey({ verb, targetId, userId }));
      }),
      { numRuns: RUNS },
    );
  });
});
