// The verdict's phases strip (assets/verdict.js): which phases of a hang it shows, in which
// order, and where each segment goes on the hang's timeline, whatever the report holds.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { PHASES_MAX, phaseSegments } from '../../../assets/verdict.js';

/* The segments as [kind, left, width], to compare at a glance. */
function shape(result) {
  return result.segments.map((s) => [s.kind, s.left, s.width]);
}

/* The demo's --stall-kind phases: a pipe read, then opening a FIFO. */
const DEMO_PHASES = [
  { kind: 'io', share: 0.23, from_ms: 0, to_ms: 180, syscall: 'read', target: 'pipe:[2495454]' },
  { kind: 'io', share: 0.77, from_ms: 190, to_ms: 790, syscall: 'openat', target: '/tmp/lagscope-demo-zEWVlW/demo.fifo' },
];

test('two phases: in time order, left and width in percent of the duration, time from the share', () => {
  const result = phaseSegments(DEMO_PHASES, 800);
  assert.deepEqual(shape(result), [['io', 0, 22.5], ['io', 23.75, 75]]);
  assert.equal(result.hidden, 0);
  const [read, open] = result.segments;
  assert.equal(read.syscall, 'read');
  assert.equal(read.target, 'pipe:[2495454]');
  assert.equal(read.function, null);
  assert.equal(read.time_ms, 0.23 * 800);
  assert.equal(open.syscall, 'openat');
  assert.equal(open.time_ms, 0.77 * 800);
});

test('the report\'s order does not matter: segments come by their start', () => {
  const result = phaseSegments([DEMO_PHASES[1], DEMO_PHASES[0]], 800);
  assert.deepEqual(result.segments.map((s) => s.syscall), ['read', 'openat']);
});

test('a cpu phase keeps its function; an unknown or missing kind is "unknown"', () => {
  const result = phaseSegments([
    { kind: 'cpu', share: 0.5, from_ms: 0, to_ms: 50, function: 'demo_busy_spin' },
    { kind: 'bogus', share: 0.25, from_ms: 50, to_ms: 75 },
    { share: 0.25, from_ms: 75, to_ms: 100 },
  ], 100);
  assert.deepEqual(shape(result), [['cpu', 0, 50], ['unknown', 50, 25], ['unknown', 75, 25]]);
  assert.equal(result.segments[0].function, 'demo_busy_spin');
  assert.equal(result.segments[0].syscall, null);
});

test('a phase of one sample is a segment of no width (viewer.css gives it a few px)', () => {
  const result = phaseSegments([
    { kind: 'sleep', share: 0.5, from_ms: 10, to_ms: 10 },
    { kind: 'io', share: 0.5, from_ms: 20, to_ms: 100 },
  ], 100);
  assert.deepEqual(shape(result), [['sleep', 10, 0], ['io', 20, 80]]);
});

test('old reports and hostile input: no phases, never a throw', () => {
  for (const phases of [undefined, null, 0, 'io', {}, { length: 2, 0: DEMO_PHASES[0], 1: DEMO_PHASES[1] }, []]) {
    assert.deepEqual(phaseSegments(phases, 800), { segments: [], hidden: 0 }, JSON.stringify(phases));
  }
  for (const phase of [null, undefined, 7, 'io', [], { kind: 'io' }]) {
    assert.deepEqual(phaseSegments([phase, phase], 800).segments, [], JSON.stringify(phase));
  }
});

test('a phase without both numbers, with a number that is not one, or ending before it starts is skipped', () => {
  const good = { kind: 'io', share: 0.5, from_ms: 0, to_ms: 400, syscall: 'read' };
  const bad = [
    { kind: 'cpu', share: 0.5, to_ms: 400 },
    { kind: 'cpu', share: 0.5, from_ms: 0 },
    { kind: 'cpu', share: 0.5, from_ms: NaN, to_ms: 400 },
    { kind: 'cpu', share: 0.5, from_ms: 0, to_ms: NaN },
    { kind: 'cpu', share: 0.5, from_ms: 0, to_ms: Infinity },
    { kind: 'cpu', share: 0.5, from_ms: -Infinity, to_ms: 10 },
    { kind: 'cpu', share: 0.5, from_ms: '0', to_ms: '400' },
    { kind: 'cpu', share: 0.5, from_ms: null, to_ms: 400 },
    { kind: 'cpu', share: 0.5, from_ms: 500, to_ms: 400 },
  ];
  for (const phase of bad) {
    const result = phaseSegments([good, phase], 800);
    assert.deepEqual(shape(result), [['io', 0, 50]], JSON.stringify(phase));
  }
});

test('clamped to the bar: negative starts, ends past the duration, huge numbers', () => {
  const result = phaseSegments([
    { kind: 'io', share: 0.5, from_ms: -50, to_ms: 20 },
    { kind: 'lock', share: 0.5, from_ms: 60, to_ms: 1e300 },
    { kind: 'wait', share: 0.1, from_ms: -1e308, to_ms: -1e300 },
    { kind: 'idle', share: 0.1, from_ms: 1e308, to_ms: 1.5e308 },
  ], 100);
  assert.deepEqual(shape(result), [['wait', 0, 0], ['io', 0, 20], ['lock', 60, 40], ['idle', 100, 0]]);
  for (const s of result.segments) {
    assert.ok(s.left >= 0 && s.left <= 100 && s.width >= 0 && s.left + s.width <= 100, JSON.stringify(s));
  }
});

test('a share outside 0..1 is clamped; one that is not a number leaves the time unknown', () => {
  const result = phaseSegments([
    { kind: 'io', share: 7, from_ms: 0, to_ms: 10 },
    { kind: 'io', share: -1, from_ms: 10, to_ms: 20 },
    { kind: 'io', share: NaN, from_ms: 20, to_ms: 30 },
    { kind: 'io', share: '0.5', from_ms: 30, to_ms: 40 },
  ], 40);
  assert.deepEqual(result.segments.map((s) => [s.share, s.time_ms]), [[1, 40], [0, 0], [null, null], [null, null]]);
});

test('without a usable duration the latest end stands for it, and no time is told', () => {
  for (const duration of [undefined, null, 0, -5, NaN, Infinity, '800']) {
    const result = phaseSegments(DEMO_PHASES, duration);
    assert.deepEqual(shape(result), [['io', 0, 22.785], ['io', 24.051, 75.949]], String(duration));
    assert.deepEqual(result.segments.map((s) => s.time_ms), [null, null]);
  }
  // Nothing to stand for it either: every phase at 0.
  assert.deepEqual(phaseSegments([{ kind: 'io', from_ms: 0, to_ms: 0 }, { kind: 'cpu', from_ms: 0, to_ms: 0 }], 0).segments, []);
});

test('200 phases: the first PHASES_MAX by time, the rest counted as hidden, all inside the bar', () => {
  const many = Array.from({ length: 200 }, (_, i) => ({ kind: i % 2 ? 'cpu' : 'io', share: 1 / 200, from_ms: (199 - i) * 5, to_ms: (199 - i) * 5 + 4 }));
  const result = phaseSegments(many, 1000);
  assert.equal(result.segments.length, PHASES_MAX);
  assert.equal(result.hidden, 200 - PHASES_MAX);
  assert.deepEqual(result.segments.map((s) => s.from_ms), Array.from({ length: PHASES_MAX }, (_, i) => i * 5));
  for (const s of result.segments) assert.ok(s.left >= 0 && s.left + s.width <= 100);
});

test('the input is not changed', () => {
  const phases = JSON.parse(JSON.stringify([DEMO_PHASES[1], DEMO_PHASES[0]]));
  const copy = JSON.parse(JSON.stringify(phases));
  phaseSegments(phases, 800);
  assert.deepEqual(phases, copy);
});
