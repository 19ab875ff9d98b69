import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { parseBlockedWords } from '../../../tray-service/domain/blocked-words.ts';
import { MAX_TEST_TEXT } from '../../../tray-service/admin/moderation-test-router.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { ADMIN_TOKEN, adminApp } from './admin-fixtures.ts';

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

describe('POST /admin/moderation/test (the blocked-words rule tester)', function () {
  this.timeout(20_000);
  const suite = useTrayStorage();
  let app: Express;
  let close: () => void;
  before(() => {
    ({ app, close } = adminApp(suite.storage, {
      blockedWords: parseBlockedWords(['spam', '*scam*', 'über'], 'exact'),
    }));
  });
  after(() => close());

  const test = (body: unknown) =>
    request(app)
      .post('/admin/moderation/test')
      .set(admin)
      .send(body as object);

  it('shows each match of the instance’s list in place, and the action the rule would take', async () => {
    const text = 'Spam, scammers and SPAM!';
    const res = await test({ text }).expect(200);
    expect(res.body).to.deep.equal({
      rule: 'blocked-words',
      action: 'flag',
      matches: [
        { word: 'spam', start: 0, end: 4 },
        { word: 'scam', start: 6, end: 10 },
        { word: 'spam', start: 19, end: 23 },
      ],
    });
    for (const match of res.body.matches as { start: number; end: number; word: string }[]) {
      expect(text.slice(match.start, match.end).toLowerCase()).to.equal(match.word);
    }
  });
  it('keeps exact words whole and reads the text as NFC', async () => {
    expect((await test({ text: 'spammer Überall' }).expect(200)).body).to.deep.equal({
      rule: 'blocked-words',
      action: null,
      matches: [],
    });
    // "über" with a combining diaeresis (NFD) is the listed word once normalised.
    const res = await test({ text: 'ist u\u0308ber alles' }).expect(200);
    expect(res.body.matches).to.deep.equal([{ word: 'über', start: 4, end: 8 }]);
  });
  it('decides and stores nothing', async () => {
    await test({ text: 'spam' }).expect(200);
    expect((await suite.storage.decisions.list({}, 10)).items).to.deep.equal([]);
  });
  it('answers 400 naming a missing, wrong or extra field, 413 over the body limit and 415 for a non-JSON body', async () => {
    expect((await test({}).expect(400)).body.message).to.match(/^text: /);
    expect((await test({ text: 7 }).expect(400)).body.message).to.equal('text: expected a string');
    expect((await test([{ text: 'x' }]).expect(400)).body.message).to.equal('body: expected a JSON object');
    expect((await test({ text: 'x', words: ['y'] }).expect(400)).body.message).to.equal(
      'words: unknown field',
    );
    // Misspelt: named as sent, not as the field it stands for, missing.
    expect((await test({ texT: 'x' }).expect(400)).body.message).to.equal('texT: unknown field');
    expect((await test({ text: 'x'.repeat(MAX_TEST_TEXT + 1) }).expect(400)).body.message).to.equal(
      `text: expected a text of at most ${MAX_TEST_TEXT} characters`,
    );
    await test({ text: 'x'.repeat(300_000) }).expect(413);
    await request(app)
      .post('/admin/moderation/test')
      .set(admin)
      .set('Content-Type', 'text/plain')
      .send('spam')
      .expect(415);
  });
});
