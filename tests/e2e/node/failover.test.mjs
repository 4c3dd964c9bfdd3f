// End-to-end: failover as a real application sees it. Through the default
// (multi-cluster) profile, with the Node.js client (@google-cloud/bigtable),
// against `btsim serve --clusters c1,c2,c3` whose clients are in c1's zone:
//   1. `btsim ctl cluster-down c1 --blackhole` black-holes the nearest
//      cluster;
//   2. the client's calls time out until the routing front end has seen
//      five in a row fail (its default), then succeed on another cluster;
//   3. after `cluster-up` the front end probes c1, readmits it, and calls
//      return to it.
//
// Run by ../node_e2e.sh, which sets BIGTABLE_EMULATOR_HOST, BTSIM (the
// binary, for `btsim ctl`) and METRICS_URL (btsim's /metrics, which says
// which cluster served the calls).
import {test, after} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import {Bigtable} from '@google-cloud/bigtable';

const INSTANCE = 'failover';
const TABLE = 't';
const FAMILY = 'cf';
const DEADLINE_EXCEEDED = 4;
const NOT_FOUND = 5;

for (const name of ['BIGTABLE_EMULATOR_HOST', 'BTSIM', 'METRICS_URL']) {
  if (!process.env[name]) throw new Error(`${name} is not set (run this through node_e2e.sh)`);
}

const bigtable = new Bigtable({projectId: 'p', metricsEnabled: false});
after(() => bigtable.close().catch(() => {}));

function ctl(...args) {
  return execFileSync(process.env.BTSIM,
                      ['ctl', '--instance', `projects/p/instances/${INSTANCE}`, ...args],
                      {encoding: 'utf8'});
}

// Requests cluster `id` has served so far (every method and code).
async function servedBy(id) {
  const text = await (await fetch(process.env.METRICS_URL)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('bigtable_server_requests_total{') &&
        line.includes(`bigtable_instance="projects/p/instances/${INSTANCE}"`) &&
        line.includes(`cluster="${id}"`)) {
      total += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return total;
}

// One read with a 500 ms deadline (the client then does not retry): the
// time it took, or the error. (Reads: this client version sends the
// deadline of a ReadRows call, not of a MutateRows one.)
async function read(t, key) {
  const start = Date.now();
  try {
    await t.getRows({keys: [key], gaxOptions: {timeout: 500}});
    return {ok: true, ms: Date.now() - start};
  } catch (err) {
    return {ok: false, code: err.code, ms: Date.now() - start, message: err.message};
  }
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

test('a black-holed nearest cluster: timeouts until ejection, failover, fail-back', async () => {
  const instance = bigtable.instance(INSTANCE);
  await instance.createTable(TABLE, {families: [FAMILY]});
  const t = instance.table(TABLE);
  // The table reaches the other clusters after the replication delay.
  for (let i = 0; ; ++i) {
    try {
      await t.getRows({keys: ['x'], limit: 1});
      break;
    } catch (err) {
      if (err.code !== NOT_FOUND || i > 200) throw err;
      await sleep(50);
    }
  }
  await t.insert([{key: 'k', data: {[FAMILY]: {v: 'before'}}}]);
  const first = await read(t, 'k');
  assert.ok(first.ok, JSON.stringify(first));
  assert.ok(await servedBy('c1') > 0, 'c1, the nearest cluster, serves first');

  ctl('cluster-down', 'c1', '--blackhole');
  const results = [];
  for (let i = 0; i < 12; ++i) results.push(await read(t, 'k'));
  console.log(results.map(r => (r.ok ? 'ok' : `code ${r.code}`) + ` ${r.ms}ms`).join(', '));
  const failures = results.findIndex(r => r.ok);
  // Five timeouts in a row eject c1; a call racing the fifth's report may
  // be a sixth.
  assert.ok(failures >= 5 && failures <= 6, `${failures} calls failed before the first success`);
  for (const r of results.slice(0, failures)) {
    assert.equal(r.code, DEADLINE_EXCEEDED, r.message);
    assert.ok(r.ms >= 450, `a black-holed call failed after ${r.ms} ms`);
  }
  for (const r of results.slice(failures)) assert.ok(r.ok, JSON.stringify(r));
  assert.match(ctl('status'), /c1 .*DOWN \(black hole\).*front end: EJECTED/);

  ctl('cluster-up', 'c1');
  // Readmitted once its ejection (5 s) is over and three probes a second
  // apart have answered.
  const up = Date.now();
  while (!/c1 .* up .*front end: admitted/.test(ctl('status'))) {
    assert.ok(Date.now() - up < 15000, 'c1 not readmitted within 15 s');
    await sleep(200);
  }
  const before = await servedBy('c1');
  for (let i = 0; i < 5; ++i) assert.ok((await read(t, 'k')).ok);
  assert.ok(await servedBy('c1') >= before + 5, 'calls return to c1');
});
