import { expect } from 'chai';
import type { z } from 'zod';
import {
  decisionsQuery,
  eventsFilter,
  MAX_TEST_TEXT,
  ruleTestBody,
} from '../../../../tray-service/admin/api-schema/admin-inputs.ts';
import { textMaxLength } from '../../../../tray-service/admin/parse-query.ts';

/** The message of the first issue, as the routers answer it (parseQuery). */
function firstMessage(schema: z.ZodType, value: unknown): string | undefined {
  const result = schema.safeParse(value);
  return result.success ? undefined : result.error.issues[0]?.message;
}

describe('admin API inputs: each limit is named in its message, not hidden by the type message', () => {
  it('a rule-tester text over the limit', () => {
    expect(firstMessage(ruleTestBody, { text: 'x'.repeat(MAX_TEST_TEXT + 1) })).to.equal(
      `expected a text of at most ${MAX_TEST_TEXT} characters`,
    );
    expect(firstMessage(ruleTestBody, { text: 7 })).to.equal('expected a string');
  });

  it('a filter value over its length, or empty', () => {
    const long = 'u'.repeat(textMaxLength + 1);
    expect(firstMessage(eventsFilter, { userId: long })).to.equal(
      `expected a user id, at most ${textMaxLength} characters`,
    );
    expect(firstMessage(decisionsQuery({ defaultLimit: 10, maxLimit: 10 }), { rule: long })).to.equal(
      `expected a rule name, at most ${textMaxLength} characters`,
    );
    expect(firstMessage(eventsFilter, { userId: '' })).to.equal('expected a user id');
    expect(firstMessage(eventsFilter, { userId: 5 })).to.equal('expected a user id');
  });
});
