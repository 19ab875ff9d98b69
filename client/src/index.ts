export { createTrayClient, type TrayClient, type TrayClientOptions } from './create-tray-client.ts';
export { TrayApiError } from './tray-api-error.ts';
export type { CallOptions } from './call-options.ts';
export type { HistoryOptions, TrayMethods } from './tray/tray-methods.ts';
export type { BlockMethods } from './block/block-methods.ts';
export type * from './generated/tray-api-types.ts';
export * from './stream/index.ts';
