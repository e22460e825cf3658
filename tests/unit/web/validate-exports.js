#!/usr/bin/env node
// Checks lagscope's exports the way the tools that open them would:
//   a speedscope file against speedscope's own file-format-schema.json (with ajv), plus the
//   rules its importer enforces beyond the schema; a Chrome trace against the Trace Event
//   Format's rules (event fields, phases, and complete events nesting on each thread).
//
// Usage:
//   validate-exports.js --tool EXPORT_TOOL REPORT.json...  export each report both ways, check both
//   validate-exports.js --speedscope FILE | --trace FILE    check files already exported
//   ... --expect-failure TEXT   succeed only if checking fails with an error containing TEXT
//                               (proves that the checks can fail)
// Exit: 0 valid, 1 a violation (each printed), 2 bad usage, 77 skipped (no node_modules).
'use strict';

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const SKIP = 77;
const ROOT = path.resolve(__dirname, '..', '..', '..');
const SCHEMA = path.join(ROOT, 'node_modules', 'speedscope', 'dist', 'release',
  'file-format-schema.json');
const AJV = path.join(ROOT, 'node_modules', 'ajv');

function usage(message) {
  console.error(`validate-exports.js: ${message}\n` +
    'usage: validate-exports.js [--expect-failure TEXT] ' +
    '(--tool EXPORT_TOOL REPORT.json... | --speedscope FILE | --trace FILE)...');
  process.exit(2);
}

function parseArgs(argv) {
  const args = { tool: null, reports: [], speedscope: [], trace: [], expectFailure: null };
  for (let i = 0; i < argv.length; i++) {
    const next = () => (i + 1 < argv.length ? argv[++i] : usage(`${argv[i]} needs a value`));
    if (argv[i] === '--tool') args.tool = next();
    else if (argv[i] === '--speedscope') args.speedscope.push(next());
    else if (argv[i] === '--trace') args.trace.push(next());
    else if (argv[i] === '--expect-failure') args.expectFailure = next();
    else if (argv[i].startsWith('--')) usage(`unknown option ${argv[i]}`);
    else args.reports.push(argv[i]);
  }
  if (args.reports.length > 0 && args.tool === null) usage('reports need --tool');
  if (args.reports.length + args.speedscope.length + args.trace.length === 0) usage('nothing to check');
  return args;
}

// ---- speedscope ------------------------------------------------------------------------------

function loadSchemaValidator() {
  if (!fs.existsSync(AJV) || !fs.existsSync(SCHEMA)) {
    console.log(`skipped: ajv or speedscope is not in ${path.join(ROOT, 'node_modules')}; ` +
      `run \`npm ci\` in ${ROOT}`);
    process.exit(SKIP);
  }
  const ajvModule = require(AJV);
  const Ajv = ajvModule.default || ajvModule;
  return new Ajv({ allErrors: true, strict: false }).compile(JSON.parse(fs.readFileSync(SCHEMA, 'utf8')));
}

// What speedscope's importer throws on, or silently gets wrong, that the schema allows.
function checkSampledProfile(profile, p, frameCount, errors) {
  const where = `profiles[${p}] ("${profile.name}")`;
  if (profile.samples.length !== profile.weights.length) {
    errors.push(`${where}: ${profile.samples.length} samples but ${profile.weights.length} weights`);
  }
  profile.samples.forEach((stack, s) => stack.forEach((frame, d) => {
    if (!Number.isInteger(frame) || frame < 0 || frame >= frameCount) {
      errors.push(`${where}: samples[${s}][${d}] = ${frame} is not an index of shared.frames ` +
        `(0..${frameCount - 1})`);
    }
  }));
  let total = 0;
  profile.weights.forEach((w, s) => {
    if (!(w >= 0)) errors.push(`${where}: weights[${s}] = ${w} is negative`);
    total += w;
  });
  const span = profile.endValue - profile.startValue;
  if (!(span >= 0)) errors.push(`${where}: endValue ${profile.endValue} is before startValue`);
  if (total > span + 1e-6 * Math.max(1, span)) {
    errors.push(`${where}: the weights add up to ${total}, past endValue - startValue = ${span}`);
  }
}

function checkSpeedscope(doc, validate) {
  if (!validate(doc)) {
    return validate.errors.map((e) => `schema: ${e.instancePath || '/'} ${e.message}` +
      (e.params && e.params.allowedValues ? ` (${e.params.allowedValues.join(', ')})` : ''));
  }
  const errors = [];
  const frameCount = doc.shared.frames.length;
  doc.profiles.forEach((profile, p) => {
    if (profile.type === 'sampled') checkSampledProfile(profile, p, frameCount, errors);
  });
  return errors;
}

// ---- Chrome's Trace Event Format -----------------------------------------------------------------

const PHASES = new Set(['B', 'E', 'X', 'i', 'I', 'C', 'b', 'n', 'e', 's', 't', 'f', 'P', 'N',
  'O', 'D', 'M', 'V', 'v', 'R', 'c', '(', ')']);
const NAMED_METADATA = new Set(['process_name', 'thread_name', 'process_labels']);
const SORT_METADATA = new Set(['process_sort_index', 'thread_sort_index']);

function checkMetadata(e, where, errors) {
  const args = e.args;
  if (NAMED_METADATA.has(e.name)) {
    if (!args || typeof args.name !== 'string') errors.push(`${where}: ${e.name} without args.name`);
  } else if (SORT_METADATA.has(e.name)) {
    if (!args || !Number.isInteger(args.sort_index)) errors.push(`${where}: ${e.name} without args.sort_index`);
  } else {
    errors.push(`${where}: unknown metadata event "${e.name}"`);
  }
}

function checkEvent(e, i, errors) {
  if (e === null || typeof e !== 'object' || Array.isArray(e)) {
    errors.push(`traceEvents[${i}] is not an object`);
    return;
  }
  const where = `traceEvents[${i}] ("${e.name}", ph ${JSON.stringify(e.ph)})`;
  if (typeof e.name !== 'string') errors.push(`${where}: name is not a string`);
  if (!PHASES.has(e.ph)) errors.push(`${where}: ph is not a phase of the Trace Event Format`);
  if (!Number.isInteger(e.pid)) errors.push(`${where}: pid is not an integer`);
  if (!Number.isInteger(e.tid)) errors.push(`${where}: tid is not an integer`);
  if (e.ph !== 'M' && !Number.isFinite(e.ts)) errors.push(`${where}: ts is not a number`);
  if (e.ph === 'X' && !(Number.isFinite(e.dur) && e.dur >= 0)) errors.push(`${where}: dur is not a number >= 0`);
  if ((e.ph === 'i' || e.ph === 'I') && e.s !== undefined && !['g', 'p', 't'].includes(e.s)) {
    errors.push(`${where}: s is not g, p or t`);
  }
  if (e.args !== undefined && (e.args === null || typeof e.args !== 'object')) {
    errors.push(`${where}: args is not an object`);
  }
  if (e.ph === 'M') checkMetadata(e, where, errors);
}

// On one thread, complete events must nest: each inside the one that encloses its start.
function checkNesting(events, errors) {
  const threads = new Map();
  events.forEach((e, i) => {
    if (!e || e.ph !== 'X' || !Number.isFinite(e.ts) || !Number.isFinite(e.dur)) return;
    const key = `${e.pid}/${e.tid}`;
    if (!threads.has(key)) threads.set(key, []);
    threads.get(key).push({ i, name: e.name, start: e.ts, end: e.ts + e.dur });
  });
  const epsilon = 1e-3; // timestamps are µs: a nanosecond of rounding is no overlap
  for (const [key, list] of threads) {
    list.sort((a, b) => a.start - b.start || b.end - a.end || a.i - b.i);
    const open = [];
    for (const x of list) {
      while (open.length > 0 && open[open.length - 1].end <= x.start + epsilon) open.pop();
      const parent = open[open.length - 1];
      if (parent && x.end > parent.end + epsilon) {
        errors.push(`pid/tid ${key}: traceEvents[${x.i}] "${x.name}" [${x.start}, ${x.end}] ` +
          `crosses traceEvents[${parent.i}] "${parent.name}" [${parent.start}, ${parent.end}]: ` +
          'complete events on one thread must nest');
      }
      open.push(x);
    }
  }
}

function checkTrace(doc) {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    return ['the trace is not a JSON object (the object form has "traceEvents")'];
  }
  if (!Array.isArray(doc.traceEvents)) return ['traceEvents is not an array'];
  const errors = [];
  if (doc.displayTimeUnit !== undefined && !['ms', 'ns'].includes(doc.displayTimeUnit)) {
    errors.push('displayTimeUnit is not "ms" or "ns"');
  }
  doc.traceEvents.forEach((e, i) => checkEvent(e, i, errors));
  checkNesting(doc.traceEvents, errors);
  return errors;
}

// ---- running -------------------------------------------------------------------------------

function parseJson(text, label) {
  try {
    return { doc: JSON.parse(text) };
  } catch (err) {
    return { errors: [`${label} is not JSON: ${err.message}`] };
  }
}

function runTool(tool, kind, report) {
  const run = spawnSync(tool, [kind, report], { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (run.error) return { errors: [`cannot run ${tool}: ${run.error.message}`] };
  if (run.status !== 0) return { errors: [`${tool} ${kind} ${report} exited ${run.status}: ${run.stderr.trim()}`] };
  return { text: run.stdout };
}

// Each item: {label, kind: 'speedscope'|'trace', text} or {label, errors}.
function collect(args) {
  const items = [];
  for (const report of args.reports) {
    for (const kind of ['speedscope', 'trace']) {
      items.push({ label: `${report} (${kind})`, kind, ...runTool(args.tool, kind, report) });
    }
  }
  for (const kind of ['speedscope', 'trace']) {
    for (const file of args[kind]) {
      items.push({ label: file, kind, text: fs.readFileSync(file, 'utf8') });
    }
  }
  return items;
}

function check(item, validate) {
  if (item.errors) return item.errors;
  const parsed = parseJson(item.text, item.label);
  if (parsed.errors) return parsed.errors;
  return item.kind === 'speedscope' ? checkSpeedscope(parsed.doc, validate) : checkTrace(parsed.doc);
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const validate = loadSchemaValidator();
  const errors = [];
  for (const item of collect(args)) {
    const found = check(item, validate);
    found.forEach((e) => errors.push(`${item.label}: ${e}`));
    if (found.length === 0) console.log(`valid: ${item.label}`);
  }
  if (args.expectFailure !== null) {
    if (errors.some((e) => e.includes(args.expectFailure))) {
      console.log(`ok: rejected as expected:\n  ${errors.join('\n  ')}`);
      return 0;
    }
    console.error(`FAIL: expected an error containing "${args.expectFailure}", got ` +
      (errors.length ? `only:\n  ${errors.join('\n  ')}` : 'none: the file was accepted'));
    return 1;
  }
  errors.forEach((e) => console.error(`INVALID: ${e}`));
  return errors.length === 0 ? 0 : 1;
}

process.exit(main());
