// The core's stages in one direction: a stage's .c files use only what its own header or an
// earlier stage's declares. The stages and their order are core/internal.h's: the stage headers
// it includes, in order ("base/base.h", then "detect/detect.h", ...). Each stage's headers
// (every .h in its folder) declare its lagscope__ functions, variables and types; each .c file
// of a stage is read for the lagscope__ names it uses, and a name a later stage declares is a
// call against the flow. port.h (what core/linux and core/darwin implement) comes where
// internal.h includes it, and internal.h's own declarations last: the top (core/*.c: the
// monitor, the lifecycle) may use every stage, and no stage the top. The ports' and the top's
// files are not read.
//
//   node stage-order.mjs ROOT [--stages] the stage order
//   node stage-order.mjs ROOT --port-web the ports include no web/ header
//
// Prints each use against the flow as "file:line: name (stage X uses stage Y, later)" and
// exits 1; 0 when there is none.
import fs from 'node:fs';
import path from 'node:path';

const root = process.argv[2];
const mode = process.argv[3] || '--stages';
if (!root || !['--stages', '--port-web'].includes(mode)) {
  console.error('usage: node stage-order.mjs ROOT [--stages|--port-web]');
  process.exit(2);
}
const core = path.join(root, 'core');

/* The text without comments, string and character literals (kept as blanks, newlines kept, so
 * that offsets still give line numbers). */
function code(text) {
  return text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/g,
    (m) => m.replace(/[^\n]/g, ' '));
}

function lineOf(text, offset) {
  let n = 1;
  for (let i = 0; i < offset; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

/* The stages, in order, as internal.h includes them: [{name, dir, header}]. "port" is port.h. */
function stages() {
  const text = fs.readFileSync(path.join(core, 'internal.h'), 'utf8')
    .replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, ''); /* comments only: the includes are strings */
  const list = [];
  for (const m of text.matchAll(/^\s*#\s*include\s*"([^"]+)"/gm)) {
    const inc = m[1];
    if (inc === 'lagscope.h') continue; /* the public API: before every stage */
    if (inc === 'port.h') list.push({ name: 'port', dir: null, headers: ['port.h'] });
    else {
      const dir = path.posix.dirname(inc);
      if (dir === '.') throw new Error('internal.h includes ' + inc + ', which is no stage header');
      const headers = fs.readdirSync(path.join(core, dir)).filter((f) => f.endsWith('.h')).sort()
        .map((f) => dir + '/' + f);
      list.push({ name: dir, dir, headers });
    }
  }
  /* The instance's own declarations (autostart, the monitor, the lifecycle): the top, after
   * every stage; its files (core/*.c) may use them all, no stage may use it. */
  list.push({ name: 'top', dir: null, headers: ['internal.h'] });
  if (list.length < 3) throw new Error('core/internal.h names ' + list.length + ' stages: its includes changed shape');
  return list;
}

/* The lagscope__ names one header declares: functions (prototypes and static inline ones),
 * extern variables, typedef'd types and struct or enum tags. */
function declared(text) {
  const names = new Set();
  /* Without preprocessor lines and attributes (a prototype may open with one). */
  const src = code(text).replace(/^\s*#[^\n]*(?:\\\n[^\n]*)*/gm, (m) => m.replace(/[^\n]/g, ' '))
    .replace(/__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)/g, (m) => m.replace(/[^\n]/g, ' '));
  let depth = 0;
  let start = 0;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '{') {
      if (depth === 0) {
        const head = src.slice(start, i);
        /* A function's body: its name is declared, its body skipped. */
        if (!/\b(struct|enum|union)\b/.test(head) || /\)\s*$/.test(head)) {
          const f = head.match(/\b(lagscope__\w+)\s*\(/);
          if (f && !/\btypedef\b/.test(head)) {
            names.add(f[1]);
            depth++;
            continue;
          }
        }
      }
      depth++;
    } else if (c === '}') {
      depth--;
      if (depth === 0 && !/\b(struct|enum|union)\b/.test(src.slice(start, i)) ) start = i + 1;
    } else if (c === ';' && depth === 0) {
      const stmt = src.slice(start, i);
      start = i + 1;
      for (const t of stmt.matchAll(/\b(?:struct|enum|union)\s+(lagscope__\w+)\s*\{/g)) names.add(t[1]);
      if (/\btypedef\b/.test(stmt)) {
        const ptr = stmt.match(/\(\s*\*\s*(lagscope__\w+)\s*\)\s*\(/);
        const last = stmt.replace(/\{[\s\S]*\}/, ' ').match(/(lagscope__\w+)\s*(?:\[[^\]]*\]\s*)*$/);
        if (ptr) names.add(ptr[1]);
        else if (last) names.add(last[1]);
      } else if (/^\s*extern\b/.test(stmt)) {
        const v = stmt.match(/(lagscope__\w+)\s*(?:\[[^\]]*\]\s*)*$/);
        if (v) names.add(v[1]);
      } else {
        /* A prototype: the first name called at the outer level of parentheses. */
        const f = stmt.match(/^[^(]*?\b(lagscope__\w+)\s*\(/);
        if (f) names.add(f[1]);
        else {
          const v = stmt.match(/^[^(]*?\b(lagscope__\w+)\s*(?:\[[^\]]*\]\s*)*$/);
          if (v) names.add(v[1]);
        }
      }
    }
  }
  return names;
}

function cFiles(dir) {
  return fs.readdirSync(path.join(core, dir)).filter((f) => f.endsWith('.c')).sort()
    .map((f) => dir + '/' + f);
}

function checkStages() {
  const list = stages();
  const owner = new Map(); /* name -> index of the stage that declares it */
  for (let s = 0; s < list.length; s++)
    for (const h of list[s].headers)
      for (const name of declared(fs.readFileSync(path.join(core, h), 'utf8'))) {
        if (owner.has(name) && owner.get(name) !== s)
          console.error('note: ' + name + ' is declared by ' + list[owner.get(name)].name + ' and ' + list[s].name);
        if (!owner.has(name)) owner.set(name, s);
      }
  const problems = [];
  let uses = 0;
  for (let s = 0; s < list.length; s++) {
    if (list[s].dir === null) continue;
    /* Its .c files and its headers: a header that names a later stage's type ties the stage to
     * it as much as a call does. */
    for (const file of [...cFiles(list[s].dir), ...list[s].headers]) {
      const text = code(fs.readFileSync(path.join(core, file), 'utf8'));
      const seen = new Set();
      for (const m of text.matchAll(/\blagscope__\w+\b/g)) {
        const at = owner.get(m[0]);
        if (at === undefined) continue;
        uses++;
        if (at <= s || seen.has(m[0])) continue;
        seen.add(m[0]); /* each name once a file: its first use */
        problems.push('core/' + file + ':' + lineOf(text, m.index) + ': ' + m[0] + ' (stage ' +
          list[s].name + ' uses stage ' + list[at].name + ', which comes after it in core/internal.h)');
      }
    }
  }
  if (owner.size < 100 || uses < 500)
    throw new Error('only ' + owner.size + ' names declared and ' + uses + ' uses found: the parser no longer reads the headers');
  if (problems.length > 0) {
    console.error('The stages go ' + list.map((s) => s.name).join(' → ') + ' (core/internal.h): a stage ' +
      'uses only its own and earlier stages\' names. ' + problems.length + ' use(s) against the flow:');
    for (const p of problems) console.error('  ' + p);
    return 1;
  }
  console.log('stage order ' + list.map((s) => s.name).join(' → ') + ': ' + owner.size +
    ' names declared, ' + uses + ' uses, none against the flow');
  return 0;
}

/* core/linux and core/darwin include no header of web/ (the viewer is a consumer: the core
 * names none, docs/hacking.md "Adding a consumer"). */
function checkPortWeb() {
  const problems = [];
  for (const dir of ['linux', 'darwin']) {
    for (const f of fs.readdirSync(path.join(core, dir)).sort()) {
      if (!/\.(c|h|m)$/.test(f)) continue;
      const text = fs.readFileSync(path.join(core, dir, f), 'utf8');
      for (const m of text.matchAll(/^\s*#\s*(?:include|import)\s*[<"]([^>"]+)[>"]/gm)) {
        const inc = path.posix.normalize(m[1]);
        if (/(^|\/)web\//.test(inc))
          problems.push('core/' + dir + '/' + f + ':' + lineOf(text, m.index + m[0].search(/\S/)) +
            ': includes ' + m[1] + ' (a port includes no web/ header)');
      }
    }
  }
  if (problems.length > 0) {
    console.error(problems.length + ' include(s) of web/ in the ports:');
    for (const p of problems) console.error('  ' + p);
    return 1;
  }
  console.log('core/linux and core/darwin include no web/ header');
  return 0;
}

try {
  process.exit(mode === '--port-web' ? checkPortWeb() : checkStages());
} catch (e) {
  console.error('stage-order: ' + e.message);
  process.exit(2);
}
