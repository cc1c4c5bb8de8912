import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { PodSpec } from 'kubernetes-types/core/v1.js';
import { fitSearches, parseResolvConf, podDnsConfig, podDnsType, readHostDns, type DnsSettings, type HostDns } from './dns.js';
import type { NodePod } from '../../api/pod/index.js';

const HOST: HostDns = { servers: ['192.168.1.1', '192.168.1.2'], searches: ['corp.example', 'example'], options: ['ndots:1', 'timeout:2'] };
const CLUSTER: DnsSettings = { clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local', resolvConf: '/etc/resolv.conf' };

function pod(spec: Partial<PodSpec> = {}): NodePod {
  return { metadata: { name: 'p', namespace: 'shop', uid: 'u' }, spec: { containers: [{ name: 'c' }], ...spec } };
}

void describe('parseResolvConf', () => {
  void it('reads nameservers, the last search line and merged options; skips comments', () => {
    const text = [
      '# comment', '; also a comment', 'nameserver 1.1.1.1', 'nameserver   8.8.8.8  ', 'nameserver',
      'search a.example b.example.', 'search c.example . d.example.', 'options ndots:2 rotate', 'options ndots:3 timeout:1', 'domain x', '',
    ].join('\n');
    assert.deepEqual(parseResolvConf(text), { servers: ['1.1.1.1', '8.8.8.8'], searches: ['c.example', 'd.example'], options: ['ndots:3', 'rotate', 'timeout:1'] });
    assert.deepEqual(parseResolvConf(''), { servers: [], searches: [], options: [] });
  });

  void it('readHostDns reads the file, and nothing for resolvConf ""', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'na-dns-'));
    try {
      const file = path.join(dir, 'resolv.conf');
      await writeFile(file, 'nameserver 9.9.9.9\nsearch x.test\n');
      assert.deepEqual(readHostDns(file), { servers: ['9.9.9.9'], searches: ['x.test'], options: [] });
      assert.equal(readHostDns(''), undefined);
      assert.throws(() => readHostDns(path.join(dir, 'absent')), { code: 'ENOENT' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

void describe('podDnsType', () => {
  void it('maps policies as upstream: ClusterFirst on the host network is Default', () => {
    assert.equal(podDnsType(pod()), 'cluster');
    assert.equal(podDnsType(pod({ dnsPolicy: 'ClusterFirst' })), 'cluster');
    assert.equal(podDnsType(pod({ dnsPolicy: 'ClusterFirst', hostNetwork: true })), 'host');
    assert.equal(podDnsType(pod({ dnsPolicy: 'ClusterFirstWithHostNet', hostNetwork: true })), 'cluster');
    assert.equal(podDnsType(pod({ dnsPolicy: 'Default' })), 'host');
    assert.equal(podDnsType(pod({ dnsPolicy: 'None' })), 'none');
  });
});

void describe('podDnsConfig', () => {
  void it('ClusterFirst: cluster servers, cluster searches before the host ones, ndots:5', () => {
    const { config, warnings } = podDnsConfig(pod(), CLUSTER, HOST, ['192.168.1.10']);
    assert.deepEqual(config, {
      servers: ['10.96.0.10'],
      searches: ['shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example', 'example'],
      options: ['ndots:5'],
    });
    assert.deepEqual(warnings, []);
  });

  void it('ClusterFirst without a cluster domain keeps the host searches', () => {
    const { config } = podDnsConfig(pod(), { ...CLUSTER, clusterDomain: '' }, HOST, []);
    assert.deepEqual(config.searches, ['corp.example', 'example']);
  });

  void it('ClusterFirst without clusterDNS falls back to Default, with a warning', () => {
    const { config, warnings } = podDnsConfig(pod(), { ...CLUSTER, clusterDNS: [] }, HOST, []);
    assert.deepEqual(config, { servers: HOST.servers, searches: HOST.searches, options: HOST.options });
    assert.deepEqual(warnings.map((w) => w.reason), ['MissingClusterDNS']);
    assert.match(warnings[0]?.message ?? '', /^pod: ".+_.+\(.+\)"\. nodeagent does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy\. Falling back to "Default" policy\.$/);
  });

  void it('Default copies the host; with resolvConf "" it points at localhost with search "."', () => {
    assert.deepEqual(podDnsConfig(pod({ dnsPolicy: 'Default' }), CLUSTER, HOST, []).config, { servers: HOST.servers, searches: HOST.searches, options: HOST.options });
    assert.deepEqual(podDnsConfig(pod({ dnsPolicy: 'Default' }), { ...CLUSTER, resolvConf: '' }, undefined, ['192.168.1.10']).config, {
      servers: ['127.0.0.1'], searches: ['.'], options: [],
    });
    assert.deepEqual(podDnsConfig(pod({ dnsPolicy: 'Default' }), { ...CLUSTER, resolvConf: '' }, undefined, ['fd00::1', '10.0.0.1']).config.servers, ['::1', '127.0.0.1']);
    assert.deepEqual(podDnsConfig(pod({ hostNetwork: true }), CLUSTER, HOST, []).config.servers, HOST.servers, 'host network + ClusterFirst = Default');
  });

  void it('ClusterFirstWithHostNet on the host network uses the cluster DNS', () => {
    assert.deepEqual(podDnsConfig(pod({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' }), CLUSTER, HOST, []).config.servers, ['10.96.0.10']);
  });

  void it('None takes only dnsConfig; dnsConfig is merged without duplicates and its options override', () => {
    const dnsConfig = { nameservers: ['1.1.1.1'], searches: ['my.search'], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] };
    assert.deepEqual(podDnsConfig(pod({ dnsPolicy: 'None', dnsConfig }), CLUSTER, HOST, []).config, {
      servers: ['1.1.1.1'], searches: ['my.search'], options: ['ndots:2', 'edns0'],
    });
    const merged = podDnsConfig(pod({ dnsConfig: { nameservers: ['10.96.0.10', '1.1.1.1'], searches: ['cluster.local', 'extra'], options: [{ name: 'ndots', value: '3' }] } }), CLUSTER, HOST, []).config;
    assert.deepEqual(merged.servers, ['10.96.0.10', '1.1.1.1']);
    assert.deepEqual(merged.searches, ['shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example', 'example', 'extra']);
    assert.deepEqual(merged.options, ['ndots:3']);
  });

  void it('keeps at most 3 nameservers and 32 searches, with warnings', () => {
    const dnsConfig = { nameservers: ['1.1.1.1', '2.2.2.2', '3.3.3.3', '4.4.4.4'], searches: Array.from({ length: 40 }, (_, i) => `s${i}.example`) };
    const { config, warnings } = podDnsConfig(pod({ dnsPolicy: 'None', dnsConfig }), CLUSTER, HOST, []);
    assert.deepEqual(config.servers, ['1.1.1.1', '2.2.2.2', '3.3.3.3']);
    assert.equal(config.searches?.length, 32);
    assert.equal(config.searches[31], 's31.example');
    assert.deepEqual(warnings.map((w) => w.reason), ['DNSConfigForming', 'DNSConfigForming']);
    assert.match(warnings[0]?.message ?? '', /^Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 1\.1\.1\.1 2\.2\.2\.2 3\.3\.3\.3$/);
    assert.match(warnings[1]?.message ?? '', /^Search Line limits were exceeded, some search paths have been omitted, the applied search line is: s0\.example /);
  });
});

void describe('fitSearches', () => {
  void it('drops domains longer than 253 characters and cuts the line to 2048 characters from the end', () => {
    assert.deepEqual(fitSearches(['a', 'x'.repeat(254), 'b']), { searches: ['a', 'b'], cut: true });
    const long = Array.from({ length: 10 }, (_, i) => `${String(i)}${'y'.repeat(249)}`);
    const { searches, cut } = fitSearches(long);
    assert.ok(cut);
    assert.equal(searches.length, 8);
    assert.ok(searches.join(' ').length <= 2048);
    assert.deepEqual(fitSearches(['a', 'b']), { searches: ['a', 'b'], cut: false });
  });
});
