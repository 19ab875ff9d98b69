/** Variables of the tray service's queue consumer, events store, tray records (issue 4). */
export const trayWorkerShape = {};
