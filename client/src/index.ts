export { TrayApiError } from './tray-api-error.ts';
export type * from './generated/tray-api-types.ts';
