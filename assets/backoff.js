/*
 * How long the viewer waits before it opens the event stream again after it failed. Pure:
 * stream.js schedules with it, node's test runner tests it (tests/unit/viewer/).
 */

export const FIRST_RETRY_MS = 300;    // at once, nearly: a server that dropped a slow reader
export const RETRY_BASE_MS = 1000;    // then 1, 2, 4, 8 s ...
export const RETRY_MAX_MS = 10000;    // ... and never longer than 10 s between tries

/* The wait before the next try, after `failures` failures in a row (1 or more). */
export function reconnectDelayMs(failures) {
  if (failures <= 1) return FIRST_RETRY_MS;
  return Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (failures - 2));
}
