// The Node generators side by side in one process (bench/bench.py, section "clients"): hlculid's
// Generator.generate() (clients/node/hlculid.js), crypto.randomUUID() and the npm uuid package's
// v7() (clients/node's devDependency); and hlculid's Mask.mask / Mask.unmask of one id (docs/masks.md). Usage: node client_generators.js MS RUNS; prints JSON:
// ns/id of each run for each contender, the contenders taking turns within every run, each run
// making as many ids as the contender makes in about MS milliseconds (from a warm-up).
'use strict';
const crypto = require('crypto');
const path = require('path');
const { pathToFileURL } = require('url');

const NODE_DIR = path.join(__dirname, '..', 'clients', 'node');
const { Generator, Mask } = require(path.join(NODE_DIR, 'hlculid.js'));

// One loop per contender, so each call site stays monomorphic; the length sum keeps the ids live.
function hlculidLoop(n) {
  const g = new Generator(12);
  let s = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) s += g.generate().length;
  return [Number(process.hrtime.bigint() - t0) / n, s];
}
function randomUuidLoop(n) {
  let s = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) s += crypto.randomUUID().length;
  return [Number(process.hrtime.bigint() - t0) / n, s];
}
function v7Loop(v7, n) {
  let s = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) s += v7().length;
  return [Number(process.hrtime.bigint() - t0) / n, s];
}

function maskLoop(f, n) {
  let s = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) s += f().length;
  return [Number(process.hrtime.bigint() - t0) / n, s];
}

async function main() {
  const budgetMs = Number(process.argv[2] || 300);
  const runs = Number(process.argv[3] || 5);
  const uuidMain = require.resolve('uuid', { paths: [NODE_DIR] }); // ESM only (uuid 12+)
  const { v7 } = await import(pathToFileURL(uuidMain).href);
  const uuidVersion = require(require.resolve('uuid/package.json', { paths: [NODE_DIR] })).version;
  const contenders = {
    'hlculid Generator.generate()': (n) => hlculidLoop(n),
    'crypto.randomUUID()': (n) => randomUuidLoop(n),
    [`uuid ${uuidVersion} v7()`]: (n) => v7Loop(v7, n),
  };
  const mask = new Mask(crypto.randomBytes(16));
  const someId = new Generator(12).generate();
  const masked = mask.mask(someId);
  contenders['hlculid Mask.unmask(masked)'] = (n) => maskLoop(() => mask.unmask(masked), n);
  contenders['Mask.mask(id)'] = (n) => maskLoop(() => mask.mask(someId), n);
  const ns = {};
  const ids = {};
  for (const [k, f] of Object.entries(contenders)) { // warm up (optimised code, filled pools), and size the runs
    f(20_000);
    ids[k] = Math.max(10_000, Math.round((budgetMs * 1e6) / f(20_000)[0]));
    ns[k] = [];
  }
  let chars = 0;
  let expected = 0;
  for (let r = 0; r < runs; r++) {
    for (const [k, f] of Object.entries(contenders)) {
      const [t, s] = f(ids[k]);
      ns[k].push(t);
      chars += s;
      expected += ids[k] * (k.startsWith('hlculid') ? 35 : 36);
    }
  }
  if (chars !== expected) throw new Error(`unexpected id lengths (${chars} characters, not ${expected})`);
  console.log(JSON.stringify({ node: process.version, ids, ns }));
}
main().catch((e) => { console.error(e); process.exit(1); });
