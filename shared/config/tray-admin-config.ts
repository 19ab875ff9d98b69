/** Variables of the tray service's admin API, moderation, operator tools (issue 7). */
export const trayAdminShape = {};
