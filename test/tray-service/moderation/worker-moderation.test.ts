import { expect } from 'chai';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { parseBlockedWords } from '../../../tray-service/domain/blocked-words.ts';
import { createBlockedWordsRule } from '../../../tray-service/moderation/blocked-words-rule.ts';
import {
  createModerationStep,
  type ModerationStep,
} from '../../../tray-service/moderation/create-moderation-step.ts';
import { postEvent, type TestEnvelope } from '../worker/event-builder.ts';
import { useWorker } from '../worker/worker-harness.ts';

const withText = (envelope: TestEnvelope, text: string): TestEnvelope => ({
  ...envelope,
  data: { ...envelope.data, post: { ...(envelope.data.post as Record<string, unknown>), text } },
});

describe('moderation in the worker (onStored hook, docs/tray-engine.md step 4)', () => {
  let step: ModerationStep | undefined;
  const worker = useWorker({ onStored: (event) => step!(event) });
  before(() => {
    step = createModerationStep({
      rules: [createBlockedWordsRule(parseBlockedWords(['spam'], 'exact'))],
      decisions: worker.storage.decisions,
      logger: createLogger({ name: 'test', level: 'silent' }),
    });
  });

  it('stores one decision for a stored post with a blocklisted word, also when the job is redelivered', async () => {
    const envelope = withText(postEvent({ postId: 'p-mod', author: 'u-spammer' }), 'cheap spam here');
    const job = await worker.deliver(envelope);
    await worker.deliver(envelope, { jobId: 'redelivered-job' });
    const { items } = await worker.storage.decisions.list({ eventKey: job.data.dedupeKey }, 10);
    expect(items).to.have.lengthOf(1);
    expect(items[0]).to.include({
      rule: 'blocked-words',
      action: 'flag',
      userId: 'u-spammer',
      delivery: 'off',
    });
    expect(items[0]!.subject).to.deep.equal({ type: 'post', id: 'p-mod' });
  });

  it('keeps a decision as long as its event: the purge that deletes the event deletes it', async () => {
    const job = await worker.deliver(withText(postEvent({ postId: 'p-expiring' }), 'more spam'));
    const stored = await worker.storage.events.get(job.data.dedupeKey);
    const { items } = await worker.storage.decisions.list({ eventKey: job.data.dedupeKey }, 10);
    expect(items.map((decision) => decision.expiresAt)).to.deep.equal([stored!.expiresAt]);
    await worker.storage.purgeExpired(new Date(stored!.expiresAt.getTime() - 1));
    expect(
      (await worker.storage.decisions.list({ eventKey: job.data.dedupeKey }, 10)).items,
    ).to.have.lengthOf(1);
    await worker.storage.purgeExpired(stored!.expiresAt);
    expect(await worker.storage.events.get(job.data.dedupeKey)).to.equal(undefined);
    expect((await worker.storage.decisions.list({ eventKey: job.data.dedupeKey }, 10)).items).to.deep.equal(
      [],
    );
  });

  it('stores nothing for a clean post', async () => {
    const job = await worker.deliver(withText(postEvent({ postId: 'p-clean' }), 'a fine day'));
    const { items } = await worker.storage.decisions.list({ eventKey: job.data.dedupeKey }, 10);
    expect(items).to.deep.equal([]);
  });
});
