// What every standalone Node test script here needs, in one place: fail (prints "FAIL …" and
// exits 1), a bound on the whole run, temporary folders and child processes that are removed
// and killed at exit whatever happens, and a bounded wait for a condition (never a bare sleep).
// api.test.js runs many named checks and keeps its own runner; the one-scenario scripts
// (port.test.js, prometheus.test.js, pushgateway.test.js) use this. Also a GET, a free port,
// and a Prometheus-family server (Prometheus, the Pushgateway) started on one.
'use strict';

const fs = require('fs');
const http = require('http');
const net = require('net');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');

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

  // A port free on host now (the kernel's pick for port 0; a server may still lose it).
  function freePort(host) {
    return new Promise((resolve) => {
      const s = net.createServer();
      s.listen(0, host, () => { const { port } = s.address(); s.close(() => resolve(port)); });
    });
  }

  // GET url with headers: { status (0 when it cannot be had within 5 s), type, body }.
  function get(url, headers = {}) {
    return new Promise((resolve) => {
      const req = http.get(url, { headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => { body += c; });
        res.on('end', () => resolve({ status: res.statusCode, type: res.headers['content-type'], body }));
      });
      req.on('error', () => resolve({ status: 0, body: '' }));
      req.setTimeout(5000, () => req.destroy());
    });
  }

  // A Prometheus-family server (file with args(attempt), then --web.listen-address) on a free
  // port of host, once its /-/ready answers: { proc, api }. A port taken between the pick and
  // the server's listen is tried again, 3 times at most; any other exit fails the test.
  async function startServer(name, file, args, host) {
    for (let attempt = 1; attempt <= 3; attempt++) {
      const port = await freePort(host);
      const proc = spawn(file, [...args(attempt), `--web.listen-address=${host}:${port}`],
        { stdio: ['ignore', 'ignore', 'pipe'] });
      track(proc);
      let err = '', exited = false;
      proc.stderr.on('data', (c) => { err += c; });
      proc.on('exit', () => { exited = true; });
      const api = `http://${host}:${port}`;
      const ready = await until(`${name} ready`, 30000, async () => {
        if (exited) return 'exited';
        return (await get(`${api}/-/ready`)).status === 200 ? 'ready' : null;
      });
      if (ready === 'ready') return { proc, api };
      letGo(proc);
      if (!/address already in use/.test(err)) fail(`${name} exited:\n${err}`);
      console.log(`note port ${port} was taken before ${name} could listen: another`);
    }
    fail(`${name} found no free port in 3 tries`);
  }

  return { fail, sleep, tempDir, track, letGo, until, get, freePort, startServer };
}

module.exports = { testScript };
