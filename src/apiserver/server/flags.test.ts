import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isOrchError } from '../../api/errors.js';
import { SECOND } from '../../api/duration.js';
import { apiServerGateEnabled, DEFAULTS, helpText, parseCommandLine } from './flags.js';

function options(...argv: string[]): typeof DEFAULTS {
  const parsed = parseCommandLine(argv);
  if (parsed.action !== 'run') throw new Error(`${argv.join(' ')} is not a run`);
  return parsed.options;
}

function problems(...argv: string[]): string {
  try {
    parseCommandLine(argv);
  } catch (err) {
    assert.ok(isOrchError(err));
    return err.message;
  }
  throw new Error(`no error for ${argv.join(' ')}`);
}

void describe('orch-apiserver flags', () => {
  void it('has kube-apiserver defaults', () => {
    const o = options();
    assert.equal(o.bindAddress, '0.0.0.0');
    assert.equal(o.securePort, 6443);
    assert.equal(o.eventTtl, 3600 * SECOND);
    assert.equal(o.maxRequestBytes, 3 * 1024 * 1024);
    assert.equal(o.http2MaxStreamsPerConnection, 0);
    assert.equal(options('--http2-max-streams-per-connection=1000').http2MaxStreamsPerConnection, 1000);
    assert.equal(o.storageBackend, 'sqlite');
    assert.equal(o.certDir, '/var/lib/orch-apiserver/pki');
    assert.equal(o.watchCache, true, 'upstream: --watch-cache defaults to true');
    assert.equal(options('--watch-cache=false').watchCache, false);
  });
  void it('reads --flag=value and --flag value, lists and durations', () => {
    const o = options('--secure-port=7443', '--bind-address', '127.0.0.1', '--storage-backend=etcd3', '--etcd-servers', 'http://a:1, http://b:2', '--event-ttl=90s');
    assert.equal(o.securePort, 7443);
    assert.equal(o.bindAddress, '127.0.0.1');
    assert.deepEqual(o.etcdServers, ['http://a:1', 'http://b:2']);
    assert.equal(o.eventTtl, 90 * SECOND);
    assert.equal(options('--secure_port=1').securePort, 1, 'underscores read as dashes');
  });
  void it('answers help and version before anything else', () => {
    assert.deepEqual(parseCommandLine(['--secure-port=1', '-h']), { action: 'help' });
    assert.deepEqual(parseCommandLine(['--version']), { action: 'version' });
    assert.match(helpText(), /--event-ttl duration\n.*\(default "1h0m0s"\)/);
  });
  void it('reports every problem at once, naming the flags', () => {
    const text = problems('--secure-port=x', '--nope', '--event-ttl=0s', '--max-request-bytes=10');
    assert.match(text, /invalid argument "x" for --secure-port/);
    assert.match(text, /unknown flag: --nope/);
    assert.match(problems('--event-ttl=0s'), /--event-ttl 0s must be at least 1s/);
    assert.match(problems('--max-request-bytes=10'), /--max-request-bytes 10 must be at least 1024/);
    assert.match(problems('--http2-max-streams-per-connection=-1'), /--http2-max-streams-per-connection -1 must be 0 \(the default, 100\) or more/);
    assert.match(problems('--etcd-servers=ftp://x', '--storage-backend=etcd3'), /is not an http\(s\):\/\/host:port URL/);
    assert.match(problems('--etcd-prefix=registry/'), /--etcd-prefix/);
    assert.match(problems('--write-admin-orchconfig'), /flag needs an argument: --write-admin-orchconfig/);
  });
  void it('reads the control loops\' flags with upstream\'s defaults and checks', () => {
    const o = options();
    assert.deepEqual(o.controllers, ['*']);
    assert.equal(o.leaderElect, true);
    assert.deepEqual([o.leaderElectLeaseDuration, o.leaderElectRenewDeadline, o.leaderElectRetryPeriod], [15 * SECOND, 10 * SECOND, 2 * SECOND]);
    assert.deepEqual([o.nodeMonitorPeriod, o.nodeMonitorGracePeriod, o.nodeStartupGracePeriod], [5 * SECOND, 40 * SECOND, 60 * SECOND]);
    assert.equal(o.terminatedPodGcThreshold, 12500);
    assert.deepEqual([o.defaultNotReadyTolerationSeconds, o.defaultUnreachableTolerationSeconds], [300, 300]);
    assert.deepEqual(options('--controllers=').controllers, []);
    assert.deepEqual(options('--controllers=*,-scheduler', '--leader-elect=false').controllers, ['*', '-scheduler']);
    assert.equal(options('--leader-elect=false').leaderElect, false);
    assert.match(problems('--controllers=*,-sheduler'), /--controllers: "sheduler" is not in the list of known controllers: scheduler, /);
    assert.match(problems('--leader-elect-renew-deadline=20s'), /--leader-elect-lease-duration 15s must be greater than --leader-elect-renew-deadline 20s/);
    assert.match(problems('--leader-elect-retry-period=9s'), /--leader-elect-renew-deadline 10s must be greater than 1.2 times --leader-elect-retry-period 9s/);
    assert.match(problems('--node-monitor-grace-period=0s'), /--node-monitor-grace-period 0s must be greater than zero/);
    assert.match(problems('--default-unreachable-toleration-seconds=-1'), /--default-unreachable-toleration-seconds -1 must not be negative/);
    assert.match(helpText(), /--controllers strings\n.*\(default "\*"\)/);
  });
});

void describe('orch-apiserver --feature-gates', () => {
  void it('takes the gates it knows, AllAlpha switching the alpha ones, and refuses others naming the known ones', () => {
    assert.equal(apiServerGateEnabled(options().featureGates, 'InPlacePodVerticalScaling'), false, 'alpha: off by default');
    assert.equal(apiServerGateEnabled(options('--feature-gates=InPlacePodVerticalScaling=true').featureGates, 'InPlacePodVerticalScaling'), true);
    assert.equal(apiServerGateEnabled(options('--feature-gates', 'AllAlpha=true').featureGates, 'InPlacePodVerticalScaling'), true);
    assert.equal(apiServerGateEnabled(options('--feature-gates=AllAlpha=true,InPlacePodVerticalScaling=false').featureGates, 'InPlacePodVerticalScaling'), false);
    assert.match(problems('--feature-gates=NoSuchGate=true'), /--feature-gates: unrecognized feature gate: NoSuchGate \(known: AllAlpha, AllBeta, InPlacePodVerticalScaling\)/);
    assert.match(problems('--feature-gates=InPlacePodVerticalScaling=yes'), /invalid value of InPlacePodVerticalScaling=yes/);
    assert.match(helpText(), /--feature-gates mapStringBool\n.*InPlacePodVerticalScaling=true\|false \(ALPHA - default=false/);
  });
});
