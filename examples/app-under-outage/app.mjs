// A small application on the official Node.js Bigtable client: it records
// orders and reads each one back, as a service would. It is what btsim's
// "my app under a zone outage" example plays a scripted outage against.
//
// Every call names the application with the x-btsim-client header, so that
// `btsim serve --scenario` judges its calls as one client, and carries a
// 1 s deadline. It writes unique values ("my-app/<n>") to the column cf:v,
// the column btsim's consistency checks follow.
//
// Runs until SIGTERM or SIGINT, then prints what it saw itself as one JSON
// line: calls that succeeded and failed, and its own error window (from its
// first failed call to its first success after it). Prints "ready" once it
// has reached the server.
//
// Environment: BIGTABLE_EMULATOR_HOST (the server), APP_NAME (default
// "my-app").
import {Bigtable} from '@google-cloud/bigtable';

const name = process.env.APP_NAME || 'my-app';
const bigtable = new Bigtable({projectId: 'p', metricsEnabled: false});
const orders = bigtable.instance('i').table('orders');
const call = {timeout: 1000, otherArgs: {headers: {'x-btsim-client': name}}};
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

let stopping = false;
process.on('SIGTERM', () => { stopping = true; });
process.on('SIGINT', () => { stopping = true; });

// Calls the server refused once the scenario had ended (before this
// application was stopped) are counted apart.
const seen = {ok: 0, failed: 0, after_the_end: 0, stale_reads: 0, errors: {}};
let firstFailure = null;  // ms since start
let windowEnd = null;
const start = Date.now();

async function attempt(fn) {
  try {
    const result = await fn();
    ++seen.ok;
    if (firstFailure !== null && windowEnd === null) windowEnd = Date.now() - start;
    return result;
  } catch (err) {
    if (String(err.message).includes('the scenario has ended')) {
      ++seen.after_the_end;
      return undefined;
    }
    ++seen.failed;
    const code = err.code ?? 'unknown';
    seen.errors[code] = (seen.errors[code] || 0) + 1;
    if (firstFailure === null) firstFailure = Date.now() - start;
    return undefined;
  }
}

await attempt(() => orders.getRows({keys: ['warm-up'], gaxOptions: call}));
console.log('ready');
for (let n = 0; !stopping; ++n) {
  const key = `order-${String(n).padStart(6, '0')}`;
  const value = `${name}/${n}`;
  const written = await attempt(
      () => orders.insert([{key, data: {cf: {v: value}}}], call).then(() => true));
  if (written) {
    const rows = await attempt(() => orders.getRows({keys: [key], gaxOptions: call}));
    const read = rows?.[0]?.[0]?.data?.cf?.v?.[0]?.value;
    if (rows && read !== value) ++seen.stale_reads;
  }
  await sleep(20);
}
await bigtable.close().catch(() => {});
console.log(JSON.stringify({
  ...seen,
  error_window_seconds: firstFailure === null || windowEnd === null
      ? null : (windowEnd - firstFailure) / 1000,
}));
