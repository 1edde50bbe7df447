// YCSB core workloads A-F against Cassandra, with the k6/x/ycsb extension.
//
// One script for every preset and both phases; environment variables choose:
//   YCSB_PHASE            load (insert the records), run (the measured workload) or verify
//                         (check YCSB_HISTORY_FILE against the datastore, nothing else); run
//   YCSB_WORKLOAD         A-F; A
//   YCSB_RECORD_COUNT     records; 1000          YCSB_FIELD_COUNT / YCSB_FIELD_LENGTH  10 / 100
//   YCSB_REQUEST_DISTRIBUTION  uniform, zipfian, latest or hotspot; the preset's
//   YCSB_PROPORTIONS      e.g. read=0.9,update=0.1; the preset's
//   YCSB_INSERT_START / YCSB_INSERT_COUNT  this client's share of the load phase; all records,
//                         or its slice of them with YCSB_CLIENTS and JOB_COMPLETION_INDEX
//   YCSB_VUS              concurrent virtual users; 32
//   YCSB_RATE             operations per second (open loop: the extension keeps the schedule,
//                         an operation that no user can start within 10 ms of its time is
//                         dropped and counted); unset runs closed loop
//   YCSB_OPS_PER_ITERATION  closed loop: operations per k6 iteration, each measured on its
//                         own; more spends less client CPU on k6 itself; 100 (1 with an
//                         operation count, which must come out exact)
//   YCSB_WARMUP           run phase warm-up, discarded; 0s
//   YCSB_WARMUP_MIN / YCSB_WARMUP_MAX  instead of YCSB_WARMUP: warm up until the throughput is
//                         steady, at least MIN and at most MAX (closed loop, fixed duration)
//   YCSB_DURATION         measured run; 60s      YCSB_OPERATION_COUNT  stop after N instead
//   YCSB_PROFILE          label for the metrics, e.g. the encryption profile's name
//   YCSB_HISTORY_FILE     record every write in this file (appended; values are sealed, so
//                         YCSB_FIELD_LENGTH is at least 32); unset records nothing
//   YCSB_VERIFY_WRITES    true: after the phase, read back every key-field whose latest write
//                         was acknowledged and report lost, stale and corrupted ones (the
//                         summary's "writes"); needs YCSB_HISTORY_FILE
//   YCSB_VERIFY_CONSISTENCY  consistency of those reads; ALL
//   YCSB_SUMMARY_FILE     also write the JSON summary here (the operator uses /dev/termination-log)
//   CQL_HOSTS             host[:port],...; 127.0.0.1     CQL_KEYSPACE  ycsb
//   CQL_TABLE             the records' table; usertable (one per record shape: a load
//                         overwrites the records of the same keys)
//   CQL_CONSISTENCY       ONE                             CQL_REPLICATION_FACTOR  1 (load)
//   CQL_CONNECTIONS_PER_HOST  connections per node, each multiplexing requests; 2
//   CQL_TLS_PROTOCOL / CQL_TLS_CIPHER_SUITE   pin TLS to exactly this protocol and suite
//   CQL_TLS_CA_FILE / CQL_TLS_SERVER_NAME     trust and name to verify
//   CQL_TLS_CERT_FILE / CQL_TLS_KEY_FILE       the client certificate, where the cluster demands one
//   CQL_TLS_FALLBACK      plaintext: connect in plaintext to nodes that do not speak TLS yet
//                         (an application's view of a live Disabled→Optional→Required change;
//                         never for a measurement); unset
//   CQL_LOGIN_DIR         a directory with the files username and password (a mounted Secret)
//   YCSB_CLIENT_CIPHER / YCSB_CLIENT_SIGNATURE  client-side protection of every written field
//                         (pkg/fieldcrypt): AES-GCM or ChaCha20-Poly1305, and Ed25519,
//                         ECDSA-P256 or RSA-2048; a read whose value does not open counts as
//                         an error; unset (None) stores values as they are
//   YCSB_CLIENT_FIELDS    how many fields, from field0 on, are protected; all
//   YCSB_CLIENT_KEY_DIR   the keys' directory (the datastore's client-keys Secret, mounted)
//   CQL_RETRIES           retries of a failed statement, on the next node at once and on every
//                         node again after a pause (100 ms doubling to 2 s); 0 (a benchmark
//                         counts every failure)
//
// The summary on stdout is the JSON the operator reads (internal/benchresult).
import { cql, workload } from 'k6/x/ycsb';

const env = __ENV;
const num = (name, dflt) => {
  const v = env[name];
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name}=${v}: give a non-negative integer`);
  return n;
};
const proportions = (spec) => {
  if (!spec) return undefined;
  const out = {};
  for (const part of spec.split(',')) {
    const [op, share] = part.split('=');
    out[op.trim()] = Number(share);
  }
  return out;
};

const phase = env.YCSB_PHASE || 'run';
if (phase !== 'load' && phase !== 'run' && phase !== 'verify') throw new Error(`YCSB_PHASE=${phase}: use load, run or verify`);
const history = env.YCSB_HISTORY_FILE || '';
const verifyWrites = phase === 'verify' || env.YCSB_VERIFY_WRITES === 'true';
if (verifyWrites && !history) throw new Error('YCSB_VERIFY_WRITES: checking writes needs the history they were recorded in; set YCSB_HISTORY_FILE');
const verifyConsistency = env.YCSB_VERIFY_CONSISTENCY || 'ALL';
const vus = num('YCSB_VUS', 32);
const rate = num('YCSB_RATE', 0);
const recordCount = num('YCSB_RECORD_COUNT', 1000);
// Several client pods share the load phase: pod i of YCSB_CLIENTS (an Indexed Job gives i as
// JOB_COMPLETION_INDEX) inserts its contiguous slice of the key numbers, as YCSB's
// insertstart/insertcount split does across machines.
const clients = Math.max(num('YCSB_CLIENTS', 1), 1);
const share = Math.ceil(recordCount / clients);
const insertStart = num('YCSB_INSERT_START', Math.min(num('JOB_COMPLETION_INDEX', 0) * share, recordCount));
const insertCount = num('YCSB_INSERT_COUNT', Math.min(share, recordCount - insertStart));
const operationCount = num('YCSB_OPERATION_COUNT', 0);
// An operation count must come out exact.
const opsPerIteration = operationCount > 0 ? 1 : Math.max(num('YCSB_OPS_PER_ITERATION', 100), 1);
const warmup = env.YCSB_WARMUP || '0s';
const duration = env.YCSB_DURATION || '60s';
const warmupMax = env.YCSB_WARMUP_MAX || '';
if (warmupMax && (rate > 0 || operationCount > 0)) {
  throw new Error('YCSB_WARMUP_MAX: a warm-up until steady needs a closed-loop run of a fixed duration; unset YCSB_RATE and YCSB_OPERATION_COUNT, or use YCSB_WARMUP');
}

const wl = workload({
  preset: env.YCSB_WORKLOAD || 'A',
  recordCount,
  operationCount,
  fieldCount: num('YCSB_FIELD_COUNT', 0),
  fieldLength: num('YCSB_FIELD_LENGTH', 0),
  requestDistribution: env.YCSB_REQUEST_DISTRIBUTION || '',
  proportions: proportions(env.YCSB_PROPORTIONS),
  insertStart,
  insertCount,
  // The verify phase reads the history; it writes nothing.
  history: phase === 'verify' ? '' : history,
});

const db = cql({
  hosts: (env.CQL_HOSTS || '127.0.0.1').split(','),
  keyspace: env.CQL_KEYSPACE || 'ycsb',
  table: env.CQL_TABLE || 'usertable',
  consistency: env.CQL_CONSISTENCY || 'ONE',
  connectionsPerHost: num('CQL_CONNECTIONS_PER_HOST', 0),
  retries: num('CQL_RETRIES', 0),
  loginDir: env.CQL_LOGIN_DIR || '',
  clientSide:
    env.YCSB_CLIENT_CIPHER || env.YCSB_CLIENT_SIGNATURE
      ? {
          cipher: env.YCSB_CLIENT_CIPHER || 'None',
          signature: env.YCSB_CLIENT_SIGNATURE || 'None',
          fields: num('YCSB_CLIENT_FIELDS', 0),
          keyDir: env.YCSB_CLIENT_KEY_DIR || '',
        }
      : undefined,
  profile: env.YCSB_PROFILE || (env.CQL_TLS_PROTOCOL ? 'tls' : 'plaintext'),
  tls: env.CQL_TLS_PROTOCOL
    ? {
        protocol: env.CQL_TLS_PROTOCOL,
        cipherSuite: env.CQL_TLS_CIPHER_SUITE || '',
        caFile: env.CQL_TLS_CA_FILE || '',
        serverName: env.CQL_TLS_SERVER_NAME || '',
        certFile: env.CQL_TLS_CERT_FILE || '',
        keyFile: env.CQL_TLS_KEY_FILE || '',
        fallback: env.CQL_TLS_FALLBACK || '',
      }
    : undefined,
});

// The measured scenario, or the warm-up: the same load for a fixed time before it.
function runScenario(length, startTime, measured) {
  // No grace: the scenario's end interrupts the operation in flight, which is not counted, so
  // the measured window is exactly the duration however many operations an iteration runs.
  const common = { exec: 'run', gracefulStop: '0s', startTime };
  if (operationCount > 0 && measured) {
    return { ...common, executor: 'shared-iterations', vus, iterations: operationCount, maxDuration: '24h' };
  }
  return { ...common, executor: 'constant-vus', vus, duration: length };
}

function scenarios() {
  if (phase === 'verify') {
    return { verify: { executor: 'shared-iterations', exec: 'verify', vus: 1, iterations: 1, maxDuration: '24h' } };
  }
  if (phase === 'load') {
    return { load: { executor: 'shared-iterations', exec: 'load', vus: Math.min(vus, Math.max(insertCount, 1)), iterations: Math.max(insertCount, 1), maxDuration: '24h' } };
  }
  if (rate > 0) {
    // Open loop: the extension keeps the schedule (warm-up included) and every user takes the
    // next operation due, one iteration per user for the whole run; an iteration per
    // operation would spend most of the client's CPU on k6 itself.
    return { run: { executor: 'per-vu-iterations', exec: 'paced', vus, iterations: 1, maxDuration: '24h', gracefulStop: '0s' } };
  }
  if (warmupMax) {
    // One iteration per user that ends when the extension's measured window does: the
    // warm-up's length is found, not scheduled.
    return { run: { executor: 'per-vu-iterations', exec: 'steady', vus, iterations: 1, maxDuration: '24h', gracefulStop: '0s' } };
  }
  const s = { run: runScenario(duration, warmup, true) };
  if (warmup !== '0s') s.warmup = runScenario(warmup, '0s', false);
  return s;
}

export const options = {
  scenarios: scenarios(),
  // A threshold that always holds makes k6 keep the run scenario's dropped iterations apart.
  thresholds: { 'dropped_iterations{scenario:run}': ['count>=0'] },
  summaryTrendStats: ['med', 'p(95)', 'p(99)', 'max'],
  // Reading back every key written takes longer than k6's default minute on a large history.
  teardownTimeout: '30m',
  // Creating the schema retries a node too busy to answer in time (cqlbench.schemaPatience).
  setupTimeout: '3m',
};

// Connects once before any virtual user: a refused TLS pin or a missing table stops the test
// here, before anything is measured.
export function setup() {
  if (phase === 'load') db.createSchema(wl, num('CQL_REPLICATION_FACTOR', 1));
  const n = db.negotiated(wl);
  console.log(`YCSB ${phase} against ${env.CQL_HOSTS || '127.0.0.1'}: ${n.protocol} ${n.cipherSuite}`);
}

export function load() {
  wl.load(db);
}

export function run() {
  wl.run(db, opsPerIteration);
}

// An operation count at a fixed rate is a duration: count / rate seconds.
const pacedDuration = operationCount > 0 ? `${Math.ceil(operationCount / rate)}s` : duration;

export function paced() {
  wl.runAtRate(db, { rate, warmUp: warmup, duration: pacedDuration });
}

export function steady() {
  wl.runUntilSteady(db, { minWarmUp: env.YCSB_WARMUP_MIN || '0s', maxWarmUp: warmupMax, duration });
}

export function verify() {
  wl.verifyWrites(db, { history, consistency: verifyConsistency });
}

// After the run, stopped or not: what the datastore acknowledged must be there.
export function teardown() {
  if (phase !== 'verify' && verifyWrites) wl.verifyWrites(db, { consistency: verifyConsistency });
}

export function handleSummary(data) {
  const dropped = data.metrics['dropped_iterations{scenario:run}'];
  const json = wl.summary(db, { phase, droppedIterations: dropped ? dropped.values.count : 0 });
  const out = { stdout: `${json}\n` };
  if (env.YCSB_SUMMARY_FILE) out[env.YCSB_SUMMARY_FILE] = json;
  return out;
}
