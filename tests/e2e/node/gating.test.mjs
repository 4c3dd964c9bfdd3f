// End-to-end: single-row transactions (CheckAndMutateRow, ReadModifyWriteRow)
// are gated by the app profile, driven with the Node.js client
// (@google-cloud/bigtable) against `btsim serve --clusters c1,c2,c3`.
//
// Run by ../node_e2e.sh, which sets BIGTABLE_EMULATOR_HOST; the client then
// talks plaintext gRPC to btsim with no credentials.
import {test, before, after} from 'node:test';
import assert from 'node:assert/strict';
import {Bigtable} from '@google-cloud/bigtable';

const PROJECT = 'p';
const INSTANCE = 'i';
const TABLE = 't';
const FAMILY = 'cf';
const NOT_ALLOWED = 'Single-row transactions are not allowed by this app profile';
const FAILED_PRECONDITION = 9;
const NOT_FOUND = 5;

if (!process.env.BIGTABLE_EMULATOR_HOST) {
  throw new Error('BIGTABLE_EMULATOR_HOST is not set (run this through node_e2e.sh)');
}

const clients = [];
// One client per app profile: the Bigtable constructor's appProfileId is sent
// as app_profile_id on every data request.
function client(appProfileId) {
  const bt = new Bigtable({projectId: PROJECT, appProfileId, metricsEnabled: false});
  clients.push(bt);
  return bt;
}
function table(appProfileId) {
  return client(appProfileId).instance(INSTANCE).table(TABLE);
}

// Awaits `promise`, which must reject with gRPC status `code` and a message
// containing `text`; returns how long the call took in milliseconds.
async function expectRejects(promise, code, text) {
  const start = Date.now();  // promise is already in flight: close enough
  await assert.rejects(promise, err => {
    assert.equal(err.code, code, `want gRPC code ${code}, got ${err.code}: ${err.message}`);
    if (text) assert.match(err.message, new RegExp(text), err.message);
    return true;
  });
  const ms = Date.now() - start;
  console.log(`rejected with code ${code} after ${ms} ms`);
  return ms;
}

const rmw = (t, key) => t.row(key).increment(`${FAMILY}:n`, 5);
const cam = (t, key) =>
  t.row(key).filter(
    {column: 'flag', value: 'on'},
    {
      onMatch: [{method: 'insert', data: {[FAMILY]: {result: 'matched'}}}],
      onNoMatch: [{method: 'insert', data: {[FAMILY]: {result: 'no-match'}}}],
    },
  );

// The newest value of FAMILY:qualifier in row `key`, or undefined. (With
// columns, row.get() resolves to the row's data; a missing row is a RowError
// with code 404.)
async function readCell(t, key, qualifier) {
  try {
    const [data] = await t.row(key).get([`${FAMILY}:${qualifier}`]);
    const cells = data?.[FAMILY]?.[qualifier] ?? [];
    return cells.length ? cells[0].value : undefined;
  } catch (err) {
    if (err.name === 'RowError' && err.code === 404) return undefined;
    throw err;
  }
}

// btsim applies a schema change on one cluster and replicates it to the
// others with the replication delay, so a new table shows up on c2/c3 a little
// later. Wait until `t` is readable through the profile before using it.
async function waitForTable(t) {
  const deadline = Date.now() + 10000;
  for (;;) {
    try {
      await t.getRows({keys: ['probe'], limit: 1});
      return;
    } catch (err) {
      if (err.code !== NOT_FOUND || Date.now() > deadline) throw err;
      await new Promise(resolve => setTimeout(resolve, 50));
    }
  }
}

before(async () => {
  const admin = client(undefined);
  const instance = admin.instance(INSTANCE);
  await instance.createTable(TABLE, {families: [FAMILY]});
  await instance.createAppProfile('txn', {
    routing: instance.cluster('c1'),
    allowTransactionalWrites: true,
    description: 'single-cluster c1, transactional writes',
    ignoreWarnings: true,
  });
  await instance.createAppProfile('single', {
    routing: instance.cluster('c3'),
    allowTransactionalWrites: false,
    description: 'single-cluster c3, no transactional writes',
    ignoreWarnings: true,
  });
  const [profiles] = await instance.getAppProfiles();
  const ids = profiles.map(p => p.id).sort();
  assert.ok(ids.includes('txn') && ids.includes('single'), `profiles: ${ids}`);
  await Promise.all([undefined, 'txn', 'single'].map(p => waitForTable(table(p))));
});

after(async () => {
  await Promise.all(clients.map(c => c.close().catch(() => {})));
});

test('default profile (multi-cluster routing): transactions are refused', async () => {
  const t = table(undefined);
  const ms = await expectRejects(rmw(t, 'default-rmw'), FAILED_PRECONDITION, NOT_ALLOWED);
  // ReadModifyWriteRow is non-idempotent: the client must not retry it (a
  // retry loop would show up as backoff delays and, eventually, a timeout).
  assert.ok(ms < 2000, `ReadModifyWriteRow took ${ms} ms: retried?`);
  await expectRejects(cam(t, 'default-cam'), FAILED_PRECONDITION, NOT_ALLOWED);
  // Nothing was written.
  assert.equal(await readCell(t, 'default-rmw', 'n'), undefined);
  assert.equal(await readCell(t, 'default-cam', 'result'), undefined);
});

test('single-cluster profile without transactional writes: refused', async () => {
  const t = table('single');
  const ms = await expectRejects(rmw(t, 'single-rmw'), FAILED_PRECONDITION, NOT_ALLOWED);
  assert.ok(ms < 2000, `ReadModifyWriteRow took ${ms} ms: retried?`);
  await expectRejects(cam(t, 'single-cam'), FAILED_PRECONDITION, NOT_ALLOWED);
  // Plain writes through the same profile are fine.
  await t.insert([{key: 'single-plain', data: {[FAMILY]: {x: 'y'}}}]);
  assert.equal(await readCell(t, 'single-plain', 'x'), 'y');
});

test('transactional profile: ReadModifyWriteRow and CheckAndMutateRow succeed', async () => {
  const t = table('txn');

  // increment returns the new value as a number (8-byte big-endian counter).
  const [first] = await rmw(t, 'txn-rmw');
  assert.equal(first, 5);
  const [second] = await t.row('txn-rmw').increment(`${FAMILY}:n`, 37);
  assert.equal(second, 42);
  const [third] = await t.row('txn-rmw').increment(`${FAMILY}:n`, -2);
  assert.equal(third, 40);

  // CheckAndMutateRow: predicate false on an empty row -> onNoMatch.
  const [matchedBefore] = await cam(t, 'txn-cam');
  assert.equal(matchedBefore, false);
  assert.equal(await readCell(t, 'txn-cam', 'result'), 'no-match');

  // Set the flag; the predicate now matches -> onMatch.
  await t.insert([{key: 'txn-cam', data: {[FAMILY]: {flag: 'on'}}}]);
  const [matchedAfter] = await cam(t, 'txn-cam');
  assert.equal(matchedAfter, true);
  assert.equal(await readCell(t, 'txn-cam', 'result'), 'matched');

  // The stored cell reads back as the counter (the client decodes an 8-byte
  // big-endian value as a number).
  assert.equal(await readCell(t, 'txn-rmw', 'n'), 40);
});

test('unknown app profile: NOT_FOUND', async () => {
  const t = table('no-such-profile');
  await expectRejects(rmw(t, 'nf-rmw'), NOT_FOUND, 'no-such-profile');
  await expectRejects(cam(t, 'nf-cam'), NOT_FOUND, 'no-such-profile');
});
