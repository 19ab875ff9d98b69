export { TrayApiError } from './tray-api-error.ts';
