export interface MutationModule {
  /** Source files whose mutants this module counts. */
  mutate: string[];
  /** The fast, server-free unit tests that must kill them. */
  spec: string[];
}

/**
 * The pure cores under mutation testing, each with only its own unit tests, so a run is bounded
 * and a score says how well those tests pin that code down.
 */
export const mutationModules: Record<string, MutationModule> = {
  signature: {
    mutate: ['receiver/signature/*.ts'],
    spec: ['test/receiver/signature/*.test.ts'],
  },
  'address-allowlist': {
    mutate: ['shared/address/*.ts', 'receiver/address/*.ts', 'receiver/allowlist/*.ts'],
    spec: [
      'test/shared/address/*.test.ts',
      'test/receiver/address/*.test.ts',
      'test/receiver/allowlist/*.test.ts',
    ],
  },
  envelope: {
    mutate: ['receiver/envelope/*.ts'],
    spec: ['test/receiver/envelope/*.test.ts'],
  },
  grouping: {
    mutate: [
      'tray-service/storage/mongodb/grouping/apply-activity.ts',
      'tray-service/domain/group-actors.ts',
    ],
    spec: [
      'test/tray-service/storage/mongodb/grouping/apply-activity.test.ts',
      'test/tray-service/domain/group-actors.test.ts',
    ],
  },
  paging: {
    mutate: [
      'tray-service/storage/mongodb/records/timestamp-page.ts',
      'tray-service/storage/mongodb/block-list/block-list-page.ts',
    ],
    spec: [
      'test/tray-service/storage/mongodb/records/timestamp-page.test.ts',
      'test/tray-service/storage/mongodb/block-list/block-list-page.test.ts',
    ],
  },
  messages: {
    mutate: ['tray-service/messages/*.ts', 'tray-service/domain/sanitize-name.ts'],
    // Every messages test except start-up.test.ts, which starts the tray service.
    spec: [
      'test/tray-service/messages/check-template.test.ts',
      'test/tray-service/messages/create-message-renderer.test.ts',
      'test/tray-service/messages/every-locale.test.ts',
      'test/tray-service/messages/message-for-record.test.ts',
      'test/tray-service/messages/message-helpers.test.ts',
      'test/tray-service/messages/messages-en.test.ts',
      'test/tray-service/messages/negotiate-locale.test.ts',
      'test/tray-service/messages/read-catalogue-dir.test.ts',
      'test/tray-service/domain/sanitize-name.test.ts',
    ],
  },
};
