import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, stat } from 'node:fs/promises';
import type { Pod } from 'kubernetes-types/core/v1.js';

import { etcHostsContent, podHostname, writeEtcHosts } from './etc-hosts.js';
import { etcHostsPath, podDir } from './paths.js';
import { currentUmask, makeTempDir, removeTempDir } from './fixtures.js';
import { OrchError } from '../../api/errors.js';
import { VOLUME_INVALID } from './types.js';
import type { NodePod } from '../../api/pod/index.js';

const HEADER = [
  '# Orch-managed hosts file.',
  '127.0.0.1\tlocalhost',
  '::1\tlocalhost ip6-localhost ip6-loopback',
  'fe00::0\tip6-localnet',
  'fe00::0\tip6-mcastprefix',
  'fe00::1\tip6-allnodes',
  'fe00::2\tip6-allrouters',
];

function pod(spec: Pod['spec'] = { containers: [] }, name = 'web-0'): NodePod {
  return { metadata: { name, namespace: 'prod', uid: '1111-2222' }, spec };
}

void describe('etc-hosts', () => {
  let root = '';
  before(async () => {
    root = await makeTempDir('etchosts');
    await mkdir(podDir(root, '1111-2222'), { recursive: true });
  });
  after(async () => {
    await removeTempDir(root);
  });

  void it('lists localhost, the pod IPs with the hostname', () => {
    assert.equal(etcHostsContent(pod(), ['10.0.0.5', 'fd00::5'], 'cluster.local'), [...HEADER, '10.0.0.5\tweb-0', 'fd00::5\tweb-0', ''].join('\n'));
  });

  void it('adds the FQDN with a subdomain, spec.hostname and the hostAliases', () => {
    const p = pod({
      containers: [],
      hostname: 'db',
      subdomain: 'backend',
      hostAliases: [{ ip: '10.1.1.1', hostnames: ['foo.local', 'bar.local'] }],
    });
    assert.equal(
      etcHostsContent(p, ['10.0.0.5'], 'cluster.local'),
      [...HEADER, '10.0.0.5\tdb.backend.prod.svc.cluster.local\tdb', '', '# Entries added by HostAliases.', '10.1.1.1\tfoo.local\tbar.local', ''].join('\n'),
    );
  });

  void it('cuts a long pod name to 63 characters without a trailing dash', () => {
    const name = `${'a'.repeat(62)}-bcd`;
    assert.equal(podHostname(pod(undefined, name), 'x').hostname, 'a'.repeat(62));
  });

  void it('rejects a hostname that is not a DNS label', () => {
    assert.throws(() => podHostname(pod({ containers: [], hostname: 'Bad_Name' }), 'x'), (err: unknown) => {
      assert.ok(err instanceof OrchError);
      assert.equal(err.code, VOLUME_INVALID);
      assert.match(err.message, /spec\.hostname "Bad_Name"/);
      return true;
    });
  });

  void it('writes the file in place (same inode) and rewrites it when the IPs change', async () => {
    const path = writeEtcHosts({ rootDir: root, pod: pod(), podIPs: ['10.0.0.5'], clusterDomain: 'cluster.local' });
    assert.equal(path, etcHostsPath(root, '1111-2222'));
    const first = await stat(etcHostsPath(root, '1111-2222'));
    assert.equal(first.mode & 0o777, 0o644 & ~(await currentUmask()));
    writeEtcHosts({ rootDir: root, pod: pod(), podIPs: ['10.0.0.9'], clusterDomain: 'cluster.local' });
    const second = await stat(etcHostsPath(root, '1111-2222'));
    assert.equal(second.ino, first.ino);
    assert.match(await readFile(etcHostsPath(root, '1111-2222'), 'utf8'), /^10\.0\.0\.9\tweb-0$/m);
  });

  void it('writes nothing for a host-network pod', () => {
    const path = writeEtcHosts({ rootDir: root, pod: { ...pod({ containers: [], hostNetwork: true }), metadata: { name: 'h', namespace: 'default', uid: 'h1' } }, podIPs: ['1.2.3.4'], clusterDomain: '' });
    assert.equal(path, undefined);
  });
});
