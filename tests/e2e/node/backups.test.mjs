// End-to-end: the Node.js client's backup API against `btsim serve
// --clusters c1,c2,c3`: a backup made on one cluster, listed, described,
// its expiry updated, restored to a new table (which holds the data as of
// the backup, not later writes) and deleted; and Bigtable's refusals for a
// bad expiry, a duplicate id, an existing restore target and a missing
// backup.
//
// Run by ../node_e2e.sh, which sets BIGTABLE_EMULATOR_HOST.
import {test, after} from 'node:test';
import assert from 'node:assert/strict';
import {Bigtable} from '@google-cloud/bigtable';

if (!process.env.BIGTABLE_EMULATOR_HOST) {
  throw new Error('BIGTABLE_EMULATOR_HOST is not set (run this through node_e2e.sh)');
}

const INVALID_ARGUMENT = 3;
const NOT_FOUND = 5;
const ALREADY_EXISTS = 6;
const HOUR_MS = 3600 * 1000;

const bigtable = new Bigtable({projectId: 'p', metricsEnabled: false});
const instance = bigtable.instance('backups');
const table = instance.table('source');
const cluster = instance.cluster('c2');

after(async () => {
  await bigtable.close().catch(() => {});
});

const rejectsWith = (promise, code) =>
  assert.rejects(promise, err => {
    assert.equal(err.code, code, `want gRPC code ${code}, got ${err.code}: ${err.message}`);
    return true;
  });

const rowKeys = async t => (await t.getRows())[0].map(row => row.id);

test('a backup is made, listed, updated, restored and deleted', async () => {
  await table.create({families: ['cf']});
  await table.insert([{key: 'r1', data: {cf: {q: 'v1'}}}]);
  // The write reaches every cluster (200 ms replication delay).
  await new Promise(resolve => setTimeout(resolve, 1000));

  const expireTime = new Date(Date.now() + 24 * HOUR_MS);
  const [backup, operation] = await cluster.createBackup('nightly', {table, expireTime});
  const [made] = await operation.promise();
  assert.equal(made.name, `${cluster.name}/backups/nightly`);
  await rejectsWith(cluster.createBackup('nightly', {table, expireTime}), ALREADY_EXISTS);

  const [listed] = await instance.getBackups();
  assert.deepEqual(listed.map(b => b.name), [backup.name]);
  const [metadata] = await backup.getMetadata();
  assert.equal(metadata.state, 'READY');
  assert.equal(metadata.sourceTable, table.name);
  assert.equal(Number(metadata.expireTime.seconds), Math.floor(expireTime.getTime() / 1000));
  assert.ok(Number(metadata.sizeBytes) > 0, `sizeBytes ${metadata.sizeBytes}`);

  const later = new Date(Date.now() + 72 * HOUR_MS);
  const [updated] = await backup.setMetadata({expireTime: later});
  assert.equal(Number(updated.expireTime.seconds), Math.floor(later.getTime() / 1000));
  await rejectsWith(backup.setMetadata({expireTime: new Date(Date.now() + 100 * 24 * HOUR_MS)}),
                    INVALID_ARGUMENT);

  await table.insert([{key: 'r2', data: {cf: {q: 'v2'}}}]);  // after the backup
  const [restored, restoreOperation] = await backup.restore('restored');
  await restoreOperation.promise();
  assert.deepEqual(await rowKeys(restored), ['r1']);
  assert.deepEqual(await rowKeys(table), ['r1', 'r2']);
  // The restored table takes writes like any other.
  await restored.insert([{key: 'r3', data: {cf: {q: 'v3'}}}]);
  assert.deepEqual(await rowKeys(restored), ['r1', 'r3']);
  await rejectsWith(backup.restore('restored'), ALREADY_EXISTS);

  await backup.delete();
  await rejectsWith(backup.getMetadata(), NOT_FOUND);
  await rejectsWith(backup.restore('again'), NOT_FOUND);
  assert.deepEqual((await instance.getBackups())[0], []);
});

test('an expiry under 6 hours away is refused', async () => {
  await rejectsWith(
      cluster.createBackup('soon', {table, expireTime: new Date(Date.now() + HOUR_MS)}),
      INVALID_ARGUMENT);
  await rejectsWith(
      instance.cluster('c9').createBackup(
          'nowhere', {table, expireTime: new Date(Date.now() + 24 * HOUR_MS)}),
      NOT_FOUND);
});
