// End-to-end: `btsim serve --scenario` records what a real application
// saw, per client. Two clients of the Node.js client name themselves with
// the x-btsim-client header (google-gax's otherArgs.headers); one uses a
// profile pinned to c1, which the scenario black-holes from 1 s to 3 s
// after `btsim ctl start`, the other a profile pinned to c2. After `btsim
// ctl finish` the server judges the recorded history: the report must hold
// each client's own results.
//
// Run by ../node_e2e.sh, which starts the server (recording.textproto) and
// sets BIGTABLE_EMULATOR_HOST and SCENARIO_HOST (its address), SCENARIO_OUT
// (its --out directory) and BTSIM (the binary, for `btsim ctl`).
import {test, after} from 'node:test';
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import {existsSync, readFileSync} from 'node:fs';
import {Bigtable} from '@google-cloud/bigtable';

for (const name of ['BIGTABLE_EMULATOR_HOST', 'SCENARIO_HOST', 'SCENARIO_OUT', 'BTSIM']) {
  if (!process.env[name]) throw new Error(`${name} is not set (run this through node_e2e.sh)`);
}
const clients = [];
after(() => Promise.all(clients.map(c => c.close().catch(() => {}))));

const ctl = (...args) => execFileSync(
    process.env.BTSIM, ['ctl', '--target', process.env.SCENARIO_HOST, ...args],
    {encoding: 'utf8'});
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

// A named client: every call carries its name, through one app profile.
function client(name, profile) {
  const bigtable = new Bigtable({projectId: 'p', appProfileId: profile,
                                 metricsEnabled: false});
  clients.push(bigtable);
  const headers = {otherArgs: {headers: {'x-btsim-client': name}}};
  const table = bigtable.instance('i').table('t');
  return {
    name,
    // Row#save takes its call options as {gaxOptions}.
    write: (key, value) => table.row(key).save({cf: {v: value}},
                                               {gaxOptions: headers}),
    // ReadRows of one key, with a 300 ms deadline.
    read: key => table.getRows({keys: [key],
                                gaxOptions: {...headers, timeout: 300}}),
  };
}

// Writes five rows at once, then reads them back in turn until `until`.
// (Writes go before the outage: this client version sends no deadline with
// MutateRows, so a write to a black-holed cluster would hang for ever.)
async function traffic(c, until) {
  const outcomes = {ok: 0, failed: 0};
  for (let i = 0; i < 5; ++i) await c.write(`${c.name}-${i}`, `${c.name}/${i}`);
  for (let i = 0; Date.now() < until; ++i) {
    try {
      await c.read(`${c.name}-${i % 5}`);
      ++outcomes.ok;
    } catch (err) {
      ++outcomes.failed;
    }
    await sleep(20);
  }
  return outcomes;
}

test('the report judges each named client by its own calls', async () => {
  assert.match(ctl('start'), /scenario started/);
  const until = Date.now() + 4500;
  const [one, two] = await Promise.all([
    traffic(client('checkout-1', 'pinned-c1'), until),
    traffic(client('checkout-2', 'pinned-c2'), until),
  ]);
  assert.ok(one.failed >= 1, `checkout-1 saw no failure: ${JSON.stringify(one)}`);
  assert.equal(two.failed, 0, `checkout-2 failed: ${JSON.stringify(two)}`);
  assert.match(ctl('finish'), /scenario finishing/);

  const report = `${process.env.SCENARIO_OUT}/report.json`;
  for (let i = 0; !existsSync(report); ++i) {
    assert.ok(i < 300, 'no report.json 30 s after ctl finish');
    await sleep(100);
  }
  // history.jsonl is written after report.json; its last line is `end`.
  const history = `${process.env.SCENARIO_OUT}/history.jsonl`;
  const lines = () => existsSync(history)
      ? readFileSync(history, 'utf8').trim().split('\n').map(line => JSON.parse(line))
      : [];
  for (let i = 0; !('end' in (lines().at(-1) ?? {})); ++i) {
    assert.ok(i < 300, 'history.jsonl incomplete 30 s after report.json');
    await sleep(100);
  }
  const r = JSON.parse(readFileSync(report, 'utf8'));
  for (const e of r.expectations) assert.ok(e.pass, `${e.name}: ${e.detail}`);
  const ops = lines().filter(l => 'operation' in l).map(l => l.operation);
  const of = name => ops.filter(o => o.client === name);
  assert.ok(of('checkout-1').length > 0 && of('checkout-2').length > 0);
  // checkout-1's reads that failed were those of the outage, cut off at
  // its 300 ms deadline.
  const failed = of('checkout-1').filter(o => o.status !== 'OK');
  assert.ok(failed.length >= 1);
  for (const o of failed) {
    assert.equal(o.status, 'DEADLINE_EXCEEDED');
    assert.equal(o.profile, 'pinned-c1');
    assert.ok(o.invoke >= 0.9 && o.invoke <= 3.2, `failed at ${o.invoke}`);
  }
  assert.deepEqual(of('checkout-2').filter(o => o.status !== 'OK'), []);
  // Writes carry the values the client wrote; reads, what they read.
  const write = of('checkout-2').find(o => o.op === 'write');
  assert.match(write.written, /^checkout-2\/\d+$/);
  assert.ok(of('checkout-2').some(o => o.op === 'read_row' && o.read === write.written));
});
