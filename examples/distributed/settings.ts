/** The numbers of the demo, shared by the script and the app processes it starts. */

/** Requests a client may make per minute, on every app process alike. */
export const LIMIT_PER_MINUTE = 10;

/** How many app processes sit behind the proxy. */
export const APP_PROCESS_COUNT = 3;

/** Requests the one client sends at once. A multiple of the process count, so each gets the same share. */
export const BURST_SIZE = 60;
