import { expect } from 'chai';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { parseBlockedWords } from '../../../tray-service/domain/blocked-words.ts';
import { createBlockedWordsRule } from '../../../tray-service/moderation/blocked-words-rule.ts';
import { createModerationStep } from '../../../tray-service/moderation/create-moderation-step.ts';
import {
  createDecisionEnqueuer,
  createDecisionsQueue,
  type DecisionJobData,
} from '../../../tray-service/moderation/decision-delivery.ts';
import { decisionId } from '../../../tray-service/domain/decision-doc.ts';
import type { ModerationRule } from '../../../tray-service/domain/moderation-rule.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { testStack } from '../../support/test-stack.ts';
import { eventDoc } from '../admin/admin-fixtures.ts';
import { randomBytes } from 'node:crypto';
import { MAX_EVENT_ID_LENGTH } from '../../../tray-service/domain/event-id.ts';
import type { BullQueue } from '../../../shared/queue/create-bull-queue.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const rule = createBlockedWordsRule(parseBlockedWords(['spam'], 'exact'));
const spamPost = () =>
  eventDoc({
    event: 'post.didCreate',
    data: { post: { postId: 'p-9', postedUserId: 'u-ana', text: 'spam here' } },
  });

describe('moderation step (worker step d)', () => {
  const suite = useTrayStorage();
  const prefix = useQueuePrefix();
  const decisionsOf = async (eventKey: string) =>
    (await suite.storage.decisions.list({ eventKey }, 10)).items;
  let queue: BullQueue<DecisionJobData>;
  before(() => {
    queue = createDecisionsQueue({ redis: testStack().redisUrl, prefix });
  });
  after(() => queue.close());

  describe('with delivery configured', () => {
    it('stores each decision once and queues it once, however often the event is moderated', async () => {
      const decisions = suite.storage.decisions;
      const step = createModerationStep({
        rules: [rule],
        decisions,
        enqueue: createDecisionEnqueuer(queue, { attempts: 3, backoffMs: 10 }),
        logger,
      });
      const event = spamPost();
      await step(event);
      await step(event);
      await Promise.all([step(event), step(event)]);
      const stored = await decisionsOf(event.key);
      expect(stored).to.have.lengthOf(1);
      expect(stored[0]).to.include({
        id: decisionId(event.key, 'blocked-words', { type: 'post', id: 'p-9' }),
        rule: 'blocked-words',
        action: 'flag',
        userId: 'u-ana',
        delivery: 'pending',
        event: 'post.didCreate',
      });
      const waiting = await queue.getWaiting();
      expect(waiting.map((job) => job.data.decisionId)).to.deep.equal([stored[0]!.id]);
    });
  });

  describe('without delivery', () => {
    it('stores decisions marked `off` and queues nothing', async () => {
      const step = createModerationStep({
        rules: [rule],
        decisions: suite.storage.decisions,
        logger,
      });
      const event = spamPost();
      await step(event);
      const [doc] = await decisionsOf(event.key);
      expect(doc?.delivery).to.equal('off');
    });

    // Delivery turned on later, and the event moderated again (a replay): the old decision is
    // not sent as if it were new.
    it('keeps them `off` once delivery is turned on, and queues none of them', async () => {
      const event = spamPost();
      await createModerationStep({ rules: [rule], decisions: suite.storage.decisions, logger })(event);
      const before = await queue.getJobCounts();
      await createModerationStep({
        rules: [rule],
        decisions: suite.storage.decisions,
        enqueue: createDecisionEnqueuer(queue, { attempts: 3, backoffMs: 10 }),
        logger,
      })(event);
      const [doc] = await decisionsOf(event.key);
      expect(doc?.delivery).to.equal('off');
      expect(await queue.getJobCounts()).to.deep.equal(before);
    });
  });

  describe('with a rule that throws', () => {
    it('still stores the other rules\u2019 decisions', async () => {
      const broken: ModerationRule = {
        name: 'broken',
        evaluate: () => {
          throw new Error('plugin bug');
        },
      };
      const step = createModerationStep({
        rules: [broken, rule],
        decisions: suite.storage.decisions,
        logger,
      });
      const event = spamPost();
      await step(event);
      expect(await decisionsOf(event.key)).to.have.lengthOf(1);
    });
  });

  describe('with a rule that answers no valid decisions', () => {
    const answers: [string, () => unknown][] = [
      ['a Promise (an async evaluate)', () => Promise.reject(new Error('async plugin'))],
      ['null', () => null],
      ['a decision without a subject', () => [{ action: 'flag', reason: 'no subject' }]],
      [
        'an action no one acts on',
        () => [{ action: 'delete', reason: 'x', subject: { type: 'post', id: 'p-9' } }],
      ],
    ];
    for (const [what, evaluate] of answers)
      it(`skips it and still stores the other rules\u2019 decisions: ${what}`, async () => {
        const logged: string[] = [];
        const broken = { name: 'broken', evaluate } as unknown as ModerationRule;
        const step = createModerationStep({
          rules: [broken, rule],
          decisions: suite.storage.decisions,
          logger: createLogger({
            name: 'test',
            level: 'error',
            destination: { write: (line: string) => void logged.push(line) },
          }),
        });
        const event = spamPost();
        expect(await step(event)).to.equal('flag');
        const stored = await decisionsOf(event.key);
        expect(stored.map((doc) => doc.rule)).to.deep.equal(['blocked-words']);
        expect(logged.join('')).to.include('"rule":"broken"');
      });
  });

  // Decisions are one per (event, rule, subject): two of one rule about one subject were merged by
  // the storage, PostgreSQL keeping the last and MongoDB the first while the event's outcome
  // counted both, so `?moderation=ban-request` listed an event whose one decision was a flag.
  describe('with a rule that decides twice about one subject', () => {
    it('stores one decision: the most severe action, both reasons', async () => {
      const twice: ModerationRule = {
        name: 'twice',
        evaluate: () => [
          { action: 'flag', reason: 'links', subject: { type: 'post', id: 'p-9' }, userId: 'u-ana' },
          { action: 'ban-request', reason: 'known scam', subject: { type: 'post', id: 'p-9' } },
          { action: 'flag', reason: 'links', subject: { type: 'post', id: 'p-9' } },
        ],
      };
      const step = createModerationStep({ rules: [twice], decisions: suite.storage.decisions, logger });
      const event = spamPost();
      expect(await step(event)).to.equal('ban-request');
      const stored = await decisionsOf(event.key);
      expect(stored).to.have.lengthOf(1);
      expect(stored[0]).to.include({ action: 'ban-request', reason: 'links; known scam', userId: 'u-ana' });
    });
  });

  describe('with a clean event', () => {
    it('stores nothing', async () => {
      const step = createModerationStep({
        rules: [rule],
        decisions: suite.storage.decisions,
        logger,
      });
      const event = eventDoc({ data: { post: { postId: 'p-0', text: 'all good' } } });
      await step(event);
      expect(await decisionsOf(event.key)).to.deep.equal([]);
    });
  });

  describe('with an author id over 128 characters (an invalid event, still moderated)', () => {
    it('stores the decision without the author, as storage keeps no longer id, on either adapter', async () => {
      // Incompressible, so no storage engine's compression keeps its index entry small.
      const author = randomBytes(3_000).toString('base64');
      const postId = 'p'.repeat(MAX_EVENT_ID_LENGTH + 1);
      const step = createModerationStep({ rules: [rule], decisions: suite.storage.decisions, logger });
      const event = eventDoc({
        event: 'post.didCreate',
        data: { post: { postId, postedUserId: author, text: 'cheap spam' } },
      });
      expect(await step(event)).to.equal('flag');
      const [decision, ...more] = await decisionsOf(event.key);
      expect(more).to.deep.equal([]);
      expect(decision).to.include({ action: 'flag', reason: 'blocklisted word: "spam"' });
      expect(decision).to.not.have.property('userId');
      // The subject is the content decided about, indexed nowhere: kept whole, so it names the post.
      expect(decision!.subject).to.deep.equal({ type: 'post', id: postId });
    });

    it('stores a decision about a post whose ids hold U+0000 or a lone surrogate, on either adapter', async () => {
      // The worker hands rules storable events, but the port keeps the rule for any caller (a plugin
      // rule's own texts, say), as for events: such text must not fail the job on every attempt.
      const step = createModerationStep({ rules: [rule], decisions: suite.storage.decisions, logger });
      const event = eventDoc({
        event: 'post.didCreate',
        data: { post: { postId: 'p\u0000nul\uD800', postedUserId: 'u\u0000ana', text: 'spam' } },
      });
      expect(await step(event)).to.equal('flag');
      const [decision, ...more] = await decisionsOf(event.key);
      expect(more).to.deep.equal([]);
      expect(decision).to.include({ action: 'flag', reason: 'blocklisted word: "spam"' });
      expect(decision!.subject.type).to.equal('post');
      expect(decision!.subject.id).to.match(/^p.nul.$/);
    });

    it('keeps an author id of exactly 128 characters', async () => {
      const author = 'u'.repeat(MAX_EVENT_ID_LENGTH);
      const step = createModerationStep({ rules: [rule], decisions: suite.storage.decisions, logger });
      const event = eventDoc({
        event: 'post.didCreate',
        data: { post: { postId: 'p-128', postedUserId: author, text: 'spam' } },
      });
      await step(event);
      expect((await decisionsOf(event.key))[0]).to.include({ userId: author });
    });
  });
});
