// What every standalone Node test script here needs, in one place: fail (prints "FAIL …" and
// exits 1), a bound on the whole run, temporary folders and child processes that are removed
// and killed at exit whatever happens, and a bounded wait for a condition (never a bare sleep).
// api.test.js runs many named checks and keeps its own runner; the one-scenario scripts
// (port.test.js, prometheus.test.js) use this.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');

// Returns the script's helpers; the whole run fails once it has taken longer than limitMs.
function testScript(limitMs) {
  const dirs = [];
  const procs = new Set();
  process.on('exit', () => {
    for (const p of procs) p.kill('SIGKILL');
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  function fail(message) {
    console.log(`FAIL ${message}`);
    process.exit(1);
  }
  setTimeout(() => fail(`the test took over ${limitMs / 1000} s`), limitMs).unref();

  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  // A new folder under the system's temporary one, removed at exit.
  const tempDir = (prefix) => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    dirs.push(d);
    return d;
  };

  // A child killed at exit unless it was let go (its end awaited by the caller).
  const track = (proc) => { procs.add(proc); return proc; };
  const letGo = (proc) => { procs.delete(proc); };

  // Awaits cond() (a promise of a value or null), every 250 ms, at most ms; its last value.
  async function until(what, ms, cond) {
    const end = Date.now() + ms;
    for (;;) {
      const v = await cond();
      if (v) return v;
      if (Date.now() > end) fail(`${what}: not within ${ms} ms`);
      await sleep(250);
    }
  }

  return { fail, sleep, tempDir, track, letGo, until };
}

module.exports = { testScript };
