export {
  createTrayClient,
  type TrayClient,
  type TrayClientOptions,
  type TrayClientStreamOptions,
} from './create-tray-client.ts';
export { TrayApiError } from './tray-api-error.ts';
export type { GetToken, TokenRequest } from './get-token.ts';
export type { CallOptions } from './call-options.ts';
export type { HistoryOptions, HistoryView, TrayMethods } from './tray/tray-methods.ts';
export type { InboxMethods, Mute, TrayTime } from './inbox/inbox-methods.ts';
export type { BlockMethods } from './block/block-methods.ts';
export * from './stream/index.ts';
export type * from './generated/tray-api-types.ts';
export { unauthorizedCodes } from './generated/tray-api-types.ts';
