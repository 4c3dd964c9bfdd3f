// Deletion protection through the Node.js client's generated table-admin
// client (BigtableTableAdminClient): UpdateTable as a long-running
// operation, then DeleteTable and dropping a family refused while the table
// is protected. Prints one line per step (the call and its outcome: "ok"
// with what it returned, or the gRPC code), so that ../node_e2e.sh can
// compare the transcripts of btsim and cbtemulator, and exits 1 if a step
// does not do what Bigtable documents.
//
// usage: BIGTABLE_EMULATOR_HOST=HOST:PORT node admin.mjs INSTANCE
import {Bigtable} from '@google-cloud/bigtable';

const instance = `projects/p/instances/${process.argv[2] ?? 'admin'}`;
const table = `${instance}/tables/protected`;
const bigtable = new Bigtable({projectId: 'p', metricsEnabled: false});
const admin = bigtable.admin.getTableAdminClient();

let failures = 0;
// Runs `call`, prints "STEP: OUTCOME", and checks OUTCOME against `want`.
async function step(name, want, call) {
  let outcome;
  try {
    outcome = `ok ${JSON.stringify(await call())}`;
  } catch (e) {
    outcome = `code ${e.code}`;
  }
  const pass = outcome === want;
  if (!pass) failures++;
  console.log(`${name}: ${outcome}${pass ? '' : `  (expected ${want})`}`);
}

const FAILED_PRECONDITION = 9;
const NOT_FOUND = 5;
const protection = async () =>
  (await admin.getTable({name: table, view: 'SCHEMA_VIEW'}))[0].deletionProtection;
const update = async (on) => {
  const [operation] = await admin.updateTable({
    table: {name: table, deletionProtection: on},
    updateMask: {paths: ['deletion_protection']},
  });
  const [result] = await operation.promise();
  return {done: operation.done ?? true, deletionProtection: result.deletionProtection};
};
const family = (modification) =>
  admin.modifyColumnFamilies({name: table, modifications: [modification]})
      .then(() => true);

await step('createTable', 'ok true', () =>
  admin.createTable({parent: instance, tableId: 'protected',
                     table: {columnFamilies: {cf: {}, extra: {}}}}).then(() => true));
await step('getTable', 'ok false', protection);
await step('updateTable(on)', 'ok {"done":true,"deletionProtection":true}', () => update(true));
await step('getTable', 'ok true', protection);
await step('deleteTable', `code ${FAILED_PRECONDITION}`, () =>
  admin.deleteTable({name: table}).then(() => true));
await step('drop family', `code ${FAILED_PRECONDITION}`, () =>
  family({id: 'extra', drop: true}));
await step('create family', 'ok true', () => family({id: 'more', create: {}}));
await step('updateTable(off)', 'ok {"done":true,"deletionProtection":false}', () => update(false));
await step('drop family', 'ok true', () => family({id: 'extra', drop: true}));
await step('deleteTable', 'ok true', () => admin.deleteTable({name: table}).then(() => true));
await step('getTable', `code ${NOT_FOUND}`, protection);
await admin.close();
await bigtable.close().catch(() => {});
process.exit(failures === 0 ? 0 : 1);
