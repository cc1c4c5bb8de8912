/**
 * The Node this agent reports, decoded by a client library's typed model
 * (@kubernetes/client-node's ObjectSerializer): every field of NodeSystemInfo the model holds
 * as a required string (upstream v1.28's required list: the Python client refuses a Node
 * without kubeProxyVersion) is present and a string.
 */
/* eslint-disable @typescript-eslint/no-unsafe-assignment --
   the library's serializer is typed with any. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { V1NodeSystemInfo, type V1Node } from '@kubernetes/client-node';
import { ObjectSerializer } from '@kubernetes/client-node/dist/serializer.js';
import { FakeLogger } from '../logging/testing.js';
import { FakeFacts, fakeMachine } from './fakes.js';
import { computeStatus, type StatusConfig } from './status.js';

const config: StatusConfig = {
  nodeName: 'n1', hostname: 'n1', nodeIPs: ['10.0.0.5'], port: 10250, agentVersion: 'v0.1.0', maxPods: 110, podsPerCore: 0,
  reservation: { systemReserved: {}, orchReserved: {}, evictionHard: { 'memory.available': '100Mi' } }, maxImages: 50,
};

void describe('the reported Node in a client library\'s model', () => {
  void it('decodes with every string field of NodeSystemInfo filled, the clients\' version names included', async () => {
    const { status } = await computeStatus(undefined, { facts: new FakeFacts(), machine: () => Promise.resolve(fakeMachine()), logger: new FakeLogger() }, config, Date.UTC(2024, 0, 2));
    const wire = JSON.parse(JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, status })) as unknown;
    const node: V1Node = ObjectSerializer.deserialize(wire, 'V1Node');
    const info = node.status?.nodeInfo;
    assert.ok(info instanceof V1NodeSystemInfo);
    const required = V1NodeSystemInfo.getAttributeTypeMap().filter((a) => a.type === 'string').map((a) => a.name);
    assert.ok(required.includes('kubeProxyVersion') && required.includes('kubeletVersion'));
    for (const name of required) {
      assert.equal(typeof (info as unknown as Record<string, unknown>)[name], 'string', `nodeInfo.${name}`);
    }
    assert.equal(info.kubeletVersion, 'v0.1.0');
    assert.equal(info.kubeProxyVersion, 'v0.1.0');
  });
});
