export { openTrayStream, type TrayStreamOptions, type TrayStreamState } from './open-tray-stream.ts';
export type { ReconnectPolicy } from './reconnect-delay.ts';
export { TrayStreamError, type TrayStreamErrorCode } from './tray-stream-error.ts';
export type { TrayStreamEvent, TrayStreamEventName } from './tray-stream-event.ts';
