import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CatalogueError } from '../../../shared/errors/catalogue-error.ts';
import { createMessageRenderer } from '../../../tray-service/messages/create-message-renderer.ts';
import { loadCatalogues } from '../../../tray-service/messages/load-catalogues.ts';
import { displayPath } from '../../../tray-service/messages/read-catalogue-dir.ts';
import { mapEvent } from '../../../tray-service/domain/map-event.ts';
import { buildTrayRecord } from '../../support/tray-record-builder.ts';
import { commentEvent } from '../worker/event-builder.ts';

/** A TRAY_MESSAGES_DIR in a temp dir, removed after the suite. */
function useCatalogueDirs() {
  const dirs: string[] = [];
  after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  return (files: Record<string, unknown>): string => {
    const dir = mkdtempSync(join(tmpdir(), 'tray-messages-'));
    dirs.push(dir);
    for (const [name, content] of Object.entries(files)) {
      writeFileSync(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content));
    }
    return dir;
  };
}

const postBy = (...names: string[]) =>
  buildTrayRecord({ verb: 'post', feed: 'community', actors: names.length, names });

describe('createMessageRenderer', () => {
  const catalogueDir = useCatalogueDirs();

  describe('output is plain text', () => {
    const renderer = createMessageRenderer({ defaultLocale: 'en' });
    it('inserts display names literally, without HTML escaping', () => {
      expect(renderer.render(postBy('<b>Ana</b>', 'Ben & "Co"'), 'en')).to.equal(
        '<b>Ana</b> and Ben & "Co" created post in Hiking Club',
      );
    });
    it('does not evaluate Handlebars in names', () => {
      expect(renderer.render(postBy('{{actor2}}'), 'en')).to.equal('{{actor2}} posted in Hiking Club');
    });
    it('removes control characters from names and keeps normal spaces', () => {
      const record = postBy('A\u0000n\u001ba\u0007 Mar\u009bía\u202e', 'Ben\nBen');
      expect(renderer.render(record, 'en')).to.equal('Ana María and Ben Ben created post in Hiking Club');
    });
    it('names the actor and the community by their ids when the event gave them blank names', () => {
      const envelope = commentEvent({ users: [{ userId: 'u-cid', displayName: ' ' }], communityName: '' });
      const [activity] = mapEvent({ ...envelope, receivedAt: Date.now() }).activities;
      const record = buildTrayRecord({
        verb: 'comment',
        feed: 'community',
        actors: 1,
        names: [activity?.actor.name ?? 'missing'],
        feedName: activity?.feed.name ?? 'missing',
      });
      expect(renderer.render(record, 'en')).to.equal('u-cid commented on your post in c-hike');
    });
    it('removes control characters from the community name', () => {
      const record = buildTrayRecord({
        verb: 'post',
        feed: 'community',
        actors: 1,
        feedName: 'Hiking\u0000 Club\r\n',
      });
      expect(renderer.render(record, 'en')).to.equal('Ana posted in Hiking Club');
    });
  });

  // A name in a right-to-left script made its message read right to left where direction comes
  // from the text (Android, iOS, dir=auto), and pulled the comma between two such names into its
  // own direction, so the latest actor no longer came first. Such names are isolated (U+2068
  // first-strong isolate ... U+2069 pop); names in the message's own direction are left as typed.
  describe('a name written in the other direction than its message', () => {
    const renderer = createMessageRenderer({ defaultLocale: 'en' });
    const isolated = (name: string) => `\u2068${name}\u2069`;
    it('is isolated in a left-to-right message, so the message keeps its direction', () => {
      expect(renderer.render(postBy('محمد'), 'en')).to.equal(`${isolated('محمد')} posted in Hiking Club`);
      expect(renderer.render(postBy('דנה', 'רון', 'Cid'), 'de')).to.match(
        new RegExp(`^${isolated('דנה')}, ${isolated('רון')} und `),
      );
    });
    it('isolates the community and a name mixing scripts, and leaves left-to-right names as typed', () => {
      const record = buildTrayRecord({
        verb: 'post',
        feed: 'community',
        actors: 2,
        names: ['Ana', 'Omar عمر'],
        feedName: 'نادي المشي',
      });
      expect(renderer.render(record, 'en')).to.equal(
        `Ana and ${isolated('Omar عمر')} created post in ${isolated('نادي المشي')}`,
      );
    });
    describe('in a right-to-left locale (TRAY_MESSAGES_DIR)', () => {
      const dir = catalogueDir({ 'ar.json': { 'post.community.1': '{{actor1}} نشر في {{community}}' } });
      const arabic = createMessageRenderer({ defaultLocale: 'en', overrideDir: dir });
      it('isolates a left-to-right name and leaves a right-to-left one as typed', () => {
        expect(arabic.render(postBy('Ana'), 'ar')).to.equal(
          `${isolated('Ana')} نشر في ${isolated('Hiking Club')}`,
        );
        const record = buildTrayRecord({
          verb: 'post',
          feed: 'community',
          actors: 1,
          names: ['محمد'],
          feedName: 'نادي',
        });
        expect(arabic.render(record, 'ar')).to.equal('محمد نشر في نادي');
      });
      it("isolates names by the direction of the text shown: the default locale's, for a message the catalogue lacks", () => {
        // ar.json has no `post.community.2`: the English text is shown, a left-to-right message,
        // in which the Arabic name must be isolated and the Latin one left as typed.
        expect(arabic.render(postBy('محمد', 'Ana'), 'ar')).to.equal(
          `${isolated('محمد')} and Ana created post in Hiking Club`,
        );
      });
    });
  });

  describe('a deleted actor', () => {
    const renderer = createMessageRenderer({ defaultLocale: 'en' });
    /** A comment record on a community post: Ana deleted, then Ben, each as the deletion leaves them. */
    const commentBy = (...actors: { name: string; deleted?: true }[]) => {
      const record = buildTrayRecord({ verb: 'comment', feed: 'community', actors: actors.length });
      record.actors = record.actors.map((actor, index) => ({ ...actor, ...actors[index] }));
      return record;
    };
    const deleted = { name: 'Deleted user', deleted: true } as const;

    it("is named in the reader's language, from that locale's catalogue", () => {
      expect(renderer.render(commentBy(deleted), 'fr')).to.equal(
        'Utilisateur supprimé a commenté votre publication dans Hiking Club',
      );
      expect(renderer.render(commentBy({ name: 'Ana' }, deleted), 'de')).to.equal(
        'Ana und Gelöschtes Konto haben deinen Beitrag in Hiking Club kommentiert',
      );
    });
    it("reads as the contract's English name in English", () => {
      expect(renderer.render(commentBy(deleted, { name: 'Ben' }), 'en')).to.equal(
        'Deleted user and Ben commented on your post in Hiking Club',
      );
    });
    it('is told by the mark, not the name: a live user called "Deleted user" keeps the name as typed', () => {
      expect(renderer.render(commentBy({ name: 'Deleted user' }), 'fr')).to.equal(
        'Deleted user a commenté votre publication dans Hiking Club',
      );
    });
    it("names the mentioning user's feed so too on a user feed", () => {
      const record = buildTrayRecord({ verb: 'mention', feed: 'user', actors: 1, mentionIn: 'post' });
      record.actors = record.actors.map((actor) => ({ ...actor, ...deleted }));
      expect(renderer.render(record, 'fr')).to.equal(
        'Utilisateur supprimé vous a mentionné dans une publication du fil de Utilisateur supprimé',
      );
    });
  });

  it('lists its locales in sorted order', () => {
    expect(createMessageRenderer({ defaultLocale: 'en' }).locales).to.deep.equal([
      'de',
      'en',
      'es',
      'fr',
      'ja',
      'pt-BR',
      'ru',
      'th',
    ]);
  });

  describe('rendering a locale without a catalogue of its own', () => {
    const renderer = createMessageRenderer({ defaultLocale: 'en' });
    it('matches it like negotiation does (fr-CA -> fr, unknown -> default)', () => {
      expect(renderer.render(postBy('Ana'), 'fr-CA')).to.equal('Ana a publié dans Hiking Club');
      expect(renderer.render(postBy('Ana'), 'xx')).to.equal('Ana posted in Hiking Club');
    });
  });

  describe('with DEFAULT_LOCALE=de', () => {
    const renderer = createMessageRenderer({ defaultLocale: 'de' });
    it('negotiates to German when nothing else matches', () => {
      expect(renderer.defaultLocale).to.equal('de');
      expect(renderer.negotiate(undefined, 'xx')).to.equal('de');
    });
  });

  describe('with an override directory (TRAY_MESSAGES_DIR)', () => {
    const dir = catalogueDir({
      'it.json': {
        _about: 'Italiano: solo alcuni messaggi; gli altri restano in inglese.',
        'post.community.1': '{{actor1}} ha pubblicato in {{community}}',
        'post.community.3+':
          "{{actor1}}, {{actor2}} e {{plural others one='# altra persona' many='# di altre persone' other='# altre persone'}} hanno pubblicato in {{community}}",
      },
      'fr.json': { 'post.community.1': '{{actor1}} a posté dans {{community}}' },
      'README.txt': 'not a catalogue',
    });
    const renderer = createMessageRenderer({ defaultLocale: 'en', overrideDir: dir });

    it('adds its locales to negotiation', () => {
      expect(renderer.locales).to.include('it');
      expect(renderer.negotiate(undefined, 'it-CH,en;q=0.5')).to.equal('it');
    });
    it('renders the messages the new locale has, with its own plural rules', () => {
      expect(renderer.render(postBy('Ana'), 'it')).to.equal('Ana ha pubblicato in Hiking Club');
      expect(renderer.render(postBy('Ana', 'Ben', 'Cid'), 'it')).to.equal(
        'Ana, Ben e 1 altra persona hanno pubblicato in Hiking Club',
      );
    });
    it('shows the default locale message, with English plural rules, where the new locale has none', () => {
      expect(renderer.render(postBy('Ana', 'Ben'), 'it')).to.equal('Ana and Ben created post in Hiking Club');
      const comments = buildTrayRecord({ verb: 'comment', feed: 'user', actors: 3 });
      expect(renderer.render(comments, 'it')).to.equal('Ana, Ben and 1 other commented on your post');
    });
    it('lists an added locale among the shipped ones in sorted order', () => {
      const dir = catalogueDir({ 'eo.json': { 'post.community.1': '{{actor1}} afiŝis en {{community}}' } });
      expect(createMessageRenderer({ defaultLocale: 'en', overrideDir: dir }).locales).to.deep.equal([
        'de',
        'en',
        'eo',
        'es',
        'fr',
        'ja',
        'pt-BR',
        'ru',
        'th',
      ]);
    });

    it('lists, per added locale, each message it falls back on', () => {
      const dir = catalogueDir({ 'eo.json': { 'post.community.1': '{{actor1}} afiŝis en {{community}}' } });
      const { fallbacks } = loadCatalogues({ defaultLocale: 'en', overrideDir: dir });
      const eo = fallbacks.filter((fallback) => fallback.locale === 'eo');
      expect(eo).to.deep.include({ locale: 'eo', key: 'post.community.2' });
      expect(eo).to.not.deep.include({ locale: 'eo', key: 'post.community.1' });
    });

    it('overrides one message of a shipped locale and keeps its others', () => {
      expect(renderer.render(postBy('Ana'), 'fr')).to.equal('Ana a posté dans Hiking Club');
      expect(renderer.render(postBy('Ana', 'Ben'), 'fr')).to.equal('Ana et Ben ont publié dans Hiking Club');
    });
    it('can make the added locale the default only if it has every message', () => {
      expect(() => createMessageRenderer({ defaultLocale: 'it', overrideDir: dir }))
        .to.throw(CatalogueError)
        .that.includes({ file: join(dir, 'it.json'), key: 'post.community.2' })
        .with.property('message')
        .that.matches(
          /TRAY_MESSAGES_DIR: [^;]*it\.json: post\.community\.2: missing; every message is required in the default locale it/,
        );
    });
  });

  describe('with a broken catalogue', () => {
    const cases: { problem: string; file: string; content: unknown; key: string; says: RegExp }[] = [
      {
        problem: 'a Handlebars syntax error',
        file: 'en.json',
        content: { 'comment.user.1': '{{actor1 commented on your post' },
        key: 'comment.user.1',
        says: /Handlebars syntax error: Parse error on line 1/,
      },
      {
        problem: 'an unknown placeholder',
        file: 'de.json',
        content: { 'post.community.1': '{{actor1}} hat in {{comunity}} gepostet' },
        key: 'post.community.1',
        says: /unknown placeholder \{\{comunity\}\}; this message can use \{\{actor1\}\}, \{\{community\}\}/,
      },
      {
        problem: 'a placeholder of another message',
        file: 'de.json',
        content: { 'comment.user.1': '{{actor1}} hat in {{community}} kommentiert' },
        key: 'comment.user.1',
        says: /unknown placeholder \{\{community\}\}/,
      },
      {
        problem: 'an unknown helper',
        file: 'fr.json',
        content: { 'mentreply.1': '{{upper actor1}} a répondu à votre commentaire' },
        key: 'mentreply.1',
        says: /unknown helper \{\{upper\}\}; the helpers are plural, list/,
      },
      {
        problem: 'a block helper',
        file: 'fr.json',
        content: { 'mentreply.1': '{{#if actor1}}{{actor1}}{{/if}} a répondu' },
        key: 'mentreply.1',
        says: /BlockStatement .* is not supported/,
      },
      {
        problem: 'a message that leaves out a placeholder',
        file: 'es.json',
        content: { 'reaction.community.1': '{{actor1}} reaccionó a tu publicación' },
        key: 'reaction.community.1',
        says: /does not use \{\{community\}\}/,
      },
      {
        problem: 'a plural missing a form the locale needs',
        file: 'ru.json',
        content: {
          'mentreply.3+':
            "{{actor1}}, {{actor2}} и ещё {{plural others one='# участник' many='# участников' other='# участника'}} ответили",
        },
        key: 'mentreply.3+',
        says: /\{\{plural\}\} lacks the form\(s\) few that ru's plural rules choose/,
      },
      {
        problem: 'a plural form the locale does not have',
        file: 'ja.json',
        content: {
          'mentreply.3+': "{{actor1}}、{{actor2}}ほか{{plural others one='#人' other='#人'}}が返信しました",
        },
        key: 'mentreply.3+',
        says: /\{\{plural\}\} form "one" is not a plural category of ja \(it has other\)/,
      },
      {
        problem: 'a plural form given twice',
        file: 'fr.json',
        content: {
          'mentreply.3+':
            "{{actor1}}, {{actor2}} et {{plural others one='# autre' many='# d’autres' other='# autres' many='# d’autres encore'}} ont répondu",
        },
        key: 'mentreply.3+',
        says: /\{\{plural\}\} form "many" is given twice/,
      },
      {
        problem: 'a bare number where the plural form is needed',
        file: 'de.json',
        content: { 'mentreply.3+': '{{actor1}}, {{actor2}} und {{others}} weitere haben geantwortet' },
        key: 'mentreply.3+',
        says: /write \{\{plural others \.\.\.\}\}/,
      },
      {
        problem: "a placeholder in the deleted user's name",
        file: 'fr.json',
        content: { 'name.deletedUser': '{{actor1}} (supprimé)' },
        key: 'name.deletedUser',
        says: /unknown placeholder \{\{actor1\}\}; this entry takes no placeholder/,
      },
      {
        problem: "a deleted user's name that shows nothing",
        file: 'fr.json',
        content: { 'name.deletedUser': ' {{! à traduire }} ' },
        key: 'name.deletedUser',
        says: /shows nothing; write this locale's name for a deleted user/,
      },
      {
        problem: "a deleted user's name of only invisible characters (a zero-width space, blank braille)",
        file: 'fr.json',
        content: { 'name.deletedUser': '\u200b\u2800' },
        key: 'name.deletedUser',
        says: /shows nothing; write this locale's name for a deleted user/,
      },
      {
        problem: 'a misspelt message key',
        file: 'de.json',
        content: { 'post.comunity.1': '{{actor1}}' },
        key: 'post.comunity.1',
        says: /unknown message key/,
      },
      {
        problem: 'a missing required message of the default locale',
        file: 'xx.json',
        content: { 'post.community.1': '{{actor1}} xx {{community}}' },
        key: 'post.community.2',
        says: /missing; every message is required in the default locale xx/,
      },
    ];

    for (const { problem, file, content, key, says } of cases) {
      it(`fails start-up on ${problem}, naming the file and key`, () => {
        const dir = catalogueDir({ [file]: content });
        const defaultLocale = file === 'xx.json' ? 'xx' : 'en';
        const attempt = () => createMessageRenderer({ defaultLocale, overrideDir: dir });
        expect(attempt)
          .to.throw(CatalogueError)
          .that.includes({ file: join(dir, file), key });
        expect(attempt).to.throw(
          new RegExp(`${join(dir, file)}: ${key.replace(/[.+]/g, '\\$&')}: ${says.source}`),
        );
      });
    }

    it('fails on a file that is not JSON, naming the file', () => {
      const dir = catalogueDir({ 'en.json': '{"post.community.1": ' });
      expect(() => createMessageRenderer({ defaultLocale: 'en', overrideDir: dir }))
        .to.throw(CatalogueError, /TRAY_MESSAGES_DIR: [^;]*en\.json: not valid JSON/)
        .with.property('variables')
        .that.deep.equals(['TRAY_MESSAGES_DIR']);
    });

    it('fails on a directory that does not exist', () => {
      expect(() =>
        createMessageRenderer({ defaultLocale: 'en', overrideDir: '/nonexistent/tray-messages' }),
      ).to.throw(
        CatalogueError,
        /TRAY_MESSAGES_DIR: \/nonexistent\/tray-messages: cannot read the catalogue directory/,
      );
    });

    it('names the override directory when DEFAULT_LOCALE has no catalogue there or shipped', () => {
      const dir = catalogueDir({ 'eo.json': {} });
      expect(() => createMessageRenderer({ defaultLocale: 'ko', overrideDir: dir }))
        .to.throw(CatalogueError)
        .with.property('file', displayPath(dir));
    });

    it('fails on a DEFAULT_LOCALE without a catalogue', () => {
      expect(() => createMessageRenderer({ defaultLocale: 'ko' }))
        .to.throw(CatalogueError, /DEFAULT_LOCALE: [^;]*no catalogue for the default locale ko/)
        .with.property('variables')
        .that.deep.equals(['DEFAULT_LOCALE']);
    });
  });
});
