// The viewer's formatting (assets/format.js): how durations, uptimes, times of day, bytes,
// percentages and frames read on the page.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  NBSP, basename, fmtBytes, fmtDuration, fmtPercent, fmtUptime, fmtWall, frameLocation, frameName,
  isSystemLibrary, isSystemModule, sharePercent, stateLabel,
} from '../../../assets/format.js';

const nb = (text) => text.replace(/ (?=[kMG]B|%)/g, NBSP); // "1.0 MB" as the page writes it

test('fmtDuration: ms below a second, seconds below a minute, then minutes and seconds', () => {
  assert.equal(fmtDuration(0), '0 ms');
  assert.equal(fmtDuration(595.4), '595 ms');
  assert.equal(fmtDuration(1000), '1.00 s');
  assert.equal(fmtDuration(1240), '1.24 s');
  assert.equal(fmtDuration(9994), '9.99 s');
  assert.equal(fmtDuration(10000), '10.0 s');
  assert.equal(fmtDuration(42350), '42.4 s');
  assert.equal(fmtDuration(60000), '1 min 00 s');
  assert.equal(fmtDuration(125000), '2 min 05 s');
  assert.equal(fmtDuration(3723000), '62 min 03 s');
});

test('fmtDuration: nothing to show is a dash', () => {
  for (const missing of [null, undefined, NaN, Infinity, -Infinity]) assert.equal(fmtDuration(missing), '—');
});

test('fmtUptime: seconds, minutes, hours, then days', () => {
  assert.equal(fmtUptime(0), '0 s');
  assert.equal(fmtUptime(59999), '59 s');
  assert.equal(fmtUptime(60000), '1 min 00 s');
  assert.equal(fmtUptime(3599000), '59 min 59 s');
  assert.equal(fmtUptime(3600000), '1 h 00 min');
  assert.equal(fmtUptime((47 * 60 + 59) * 60000), '47 h 59 min');
  assert.equal(fmtUptime(48 * 3600000), '2 d 0 h');
  assert.equal(fmtUptime(50 * 3600000 + 59 * 60000), '2 d 2 h');
});

test('fmtBytes: kB, MB with one decimal, GB with two, a no-break space before the unit', () => {
  assert.equal(fmtBytes(0), nb('0 kB'));
  assert.equal(fmtBytes(258000), nb('258 kB'));
  assert.equal(fmtBytes(1e6), nb('1.0 MB'));
  assert.equal(fmtBytes(12.34e6), nb('12.3 MB'));
  assert.equal(fmtBytes(1e9), nb('1.00 GB'));
  assert.equal(fmtBytes(2.345e9), nb('2.35 GB'));
  assert.equal(fmtBytes(null), '—');
  assert.equal(fmtBytes(undefined), '—');
  assert.ok(!fmtBytes(5e6).includes(' '), 'a line must never break between number and unit');
});

test('fmtPercent: one decimal below 100, none from 100 on (a busy app uses several cores)', () => {
  assert.equal(fmtPercent(0), nb('0.0 %'));
  assert.equal(fmtPercent(7.25), nb('7.3 %'));
  assert.equal(fmtPercent(99.94), nb('99.9 %'));
  assert.equal(fmtPercent(100), nb('100 %'));
  assert.equal(fmtPercent(250.4), nb('250 %'));
  assert.equal(fmtPercent(null), '—');
});

test('sharePercent: whole percents, and "<1" for a share that is there but rounds to 0', () => {
  assert.equal(sharePercent(1), nb('100 %'));
  assert.equal(sharePercent(0.5), nb('50 %'));
  assert.equal(sharePercent(0.004), nb('<1 %'));
  assert.equal(sharePercent(0), nb('0 %'));
  assert.equal(sharePercent(undefined), nb('0 %'));
});

test('fmtWall: the local time of day, with milliseconds on request, with the date when not today', () => {
  const today = new Date();
  today.setHours(9, 5, 7, 42);
  assert.equal(fmtWall(today.getTime()), '09:05:07');
  assert.equal(fmtWall(today.getTime(), true), '09:05:07.042');
  const earlier = new Date(2020, 0, 2, 3, 4, 5, 6).getTime();
  assert.equal(fmtWall(earlier), '2020-01-02 03:04:05');
  assert.equal(fmtWall(earlier, true), '2020-01-02 03:04:05.006');
  assert.equal(fmtWall(0), '—');
  assert.equal(fmtWall(undefined), '—');
});

test('frameName: the function, else module+offset, else the address', () => {
  assert.equal(frameName({ function: 'demo_busy_spin', module: '/bin/demo' }), 'demo_busy_spin');
  assert.equal(frameName({ module: '/usr/lib/libc.so.6', module_offset: '0x1f00', address: '0x7f00' }), 'libc.so.6+0x1f00');
  assert.equal(frameName({ module: '/opt/app/libx.so', address: '0x7f00' }), 'libx.so+0x7f00');
  assert.equal(frameName({ module: 'plain' }), 'plain+?');
  assert.equal(frameName({ address: '0x401000' }), '0x401000');
  assert.equal(frameName({}), '(unknown)');
});

test('frameLocation: file name and line, or nothing without a file', () => {
  assert.equal(frameLocation({ file: '/src/demo/demo.c', line: 455 }), 'demo.c:455');
  assert.equal(frameLocation({ file: 'demo.c' }), 'demo.c');
  assert.equal(frameLocation({ function: 'f' }), '');
  assert.equal(basename('/a/b/c.so'), 'c.so');
  assert.equal(basename('c.so'), 'c.so');
  assert.equal(basename(undefined), '');
});

test('isSystemLibrary: the C library, the loader, the vDSO and Darwin\'s system, not the app', () => {
  for (const module of ['/usr/lib/x86_64-linux-gnu/libc.so.6', '/lib/x86_64-linux-gnu/libm.so.6',
    '/lib64/ld-linux-x86-64.so.2', 'linux-vdso.so.1', '[vdso]', '/System/Library/Frameworks/UIKit.framework/UIKit']) {
    assert.equal(isSystemLibrary(module), true, module);
  }
  for (const module of ['/home/me/build/lagscope-demo', '/opt/app/lib/libwidget.so', '', undefined, null]) {
    assert.equal(isSystemLibrary(module), false, String(module));
  }
});

test('isSystemModule: shared libraries get the flame graph\'s cool colours, the executable warm ones', () => {
  assert.equal(isSystemModule('/usr/lib/libc.so.6'), true);
  assert.equal(isSystemModule('/opt/app/libwidget.so'), true);
  assert.equal(isSystemModule('/usr/lib/libSystem.B.dylib'), true);
  assert.equal(isSystemModule('/home/me/build/lagscope-demo'), false);
  assert.equal(isSystemModule(undefined), false);
});

test('stateLabel: the words of the hang list', () => {
  assert.equal(stateLabel('in_progress'), 'hanging');
  assert.equal(stateLabel('ended'), 'ended');
  assert.equal(stateLabel('ended_by_termination'), 'killed while hung');
});
