import { expect } from 'chai';
import { MongoServerError, type Collection } from 'mongodb';
import {
  isDuplicateKey,
  onlyDuplicateKeys,
  writeErrorsOf,
} from '../../../../../tray-service/storage/mongodb/driver/is-duplicate-key.ts';
import { useMongo } from '../../../../support/suite-resources.ts';

describe('duplicate-key errors (storage/mongodb/driver/is-duplicate-key.ts)', () => {
  const mongo = useMongo();
  let docs: Collection<{ _id: string }>;
  before(() => {
    docs = mongo.db.collection('duplicate_key_probe');
  });

  it('recognises the server refusing an insert of an existing _id', async () => {
    await docs.insertOne({ _id: 'a' });
    const error: unknown = await docs.insertOne({ _id: 'a' }).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(MongoServerError);
    expect(isDuplicateKey(error)).to.equal(true);
  });

  it('accepts a bulk write that lost only insert races, and lists its write errors', async () => {
    await docs.insertOne({ _id: 'b' });
    const error: unknown = await docs
      .insertMany([{ _id: 'b' }, { _id: 'c' }], { ordered: false })
      .catch((e: unknown) => e);
    expect(writeErrorsOf(error)).to.have.lengthOf(1);
    expect(onlyDuplicateKeys(error)).to.equal(true);
  });

  it('refuses errors that are not duplicate keys, or carry no write errors', () => {
    expect(isDuplicateKey(new Error('network'))).to.equal(false);
    expect(isDuplicateKey(undefined)).to.equal(false);
    expect(onlyDuplicateKeys(new Error('network'))).to.equal(false);
    expect(onlyDuplicateKeys({ writeErrors: [] })).to.equal(false);
    expect(onlyDuplicateKeys({ writeErrors: [{ code: 11000 }, { code: 121 }] })).to.equal(false);
    expect(onlyDuplicateKeys({ writeErrors: { code: 11000 } })).to.equal(true);
  });
});
