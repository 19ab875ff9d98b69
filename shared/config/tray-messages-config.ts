/** Variables of the tray service's localised messages (issue 6). */
export const trayMessagesShape = {};
