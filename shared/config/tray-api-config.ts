/** Variables of the tray service's tray and block-list HTTP API: auth, rate limits (issue 5). */
export const trayApiShape = {};
