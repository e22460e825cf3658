// The event stream's reconnect backoff (assets/backoff.js): at once, then doubling, capped.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FIRST_RETRY_MS, RETRY_MAX_MS, reconnectDelayMs } from '../../../assets/backoff.js';

test('the first retry comes at once, then 1, 2, 4, 8 s, then every 10 s', () => {
  const delays = [1, 2, 3, 4, 5, 6, 7, 8].map(reconnectDelayMs);
  assert.deepEqual(delays, [300, 1000, 2000, 4000, 8000, 10000, 10000, 10000]);
  assert.equal(FIRST_RETRY_MS, 300);
  assert.equal(RETRY_MAX_MS, 10000);
});

test('never shorter than the previous wait, never longer than the cap, however long it fails', () => {
  let previous = 0;
  for (let failures = 1; failures <= 5000; failures++) {
    const delay = reconnectDelayMs(failures);
    assert.ok(Number.isFinite(delay), 'failure ' + failures + ': ' + delay);
    assert.ok(delay >= previous && delay <= RETRY_MAX_MS, 'failure ' + failures + ': ' + delay);
    previous = delay;
  }
});

test('no failure counted yet is the first retry', () => {
  assert.equal(reconnectDelayMs(0), FIRST_RETRY_MS);
});
