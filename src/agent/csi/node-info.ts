/**
 * A registered driver's node info where the cluster reads it, as upstream's nodeinfomanager:
 * the Node's `csi.volume.orch.io/nodeid` annotation (a JSON map driver → node ID), the driver's
 * topology segments as Node labels, and the driver's entry (node ID, topology keys, allocatable
 * count) in the CSINode named after the Node (made, owned by the Node, when missing). Removal
 * undoes the annotation entry and the CSINode entry (topology labels stay, as upstream).
 */
import type { Node } from 'kubernetes-types/core/v1.js';
import type { CSINode, CSINodeDriver } from 'kubernetes-types/storage/v1.js';

import { OrchError, messageOf } from '../../api/errors.js';
import { getIfExists, statusOf, type RestClient } from '../orchclient/index.js';
import type { NodeInfo } from './client.js';
import type { NodeInfoPublisher } from './drivers.js';
import { CSI_NODE_INFO_FAILED } from './errors.js';

export const NODE_ID_ANNOTATION = 'csi.volume.orch.io/nodeid';
const CSINODES = '/apis/storage.orch.io/v1/csinodes';

function nodeIDs(node: Node | undefined): Record<string, string> {
  const raw = node?.metadata?.annotations?.[NODE_ID_ANNOTATION];
  if (raw === undefined) return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, string>) : {};
  } catch {
    return {};
  }
}

export function createNodeInfoPublisher(options: { readonly rest: RestClient; readonly nodeName: string }): NodeInfoPublisher {
  const { rest, nodeName } = options;
  const nodePath = `/api/v1/nodes/${encodeURIComponent(nodeName)}`;
  const csiNodePath = `${CSINODES}/${encodeURIComponent(nodeName)}`;
  const wrap = async (driver: string, what: string, work: () => Promise<void>): Promise<void> => {
    try {
      await work();
    } catch (err) {
      throw new OrchError(CSI_NODE_INFO_FAILED, 'unavailable', `CSI driver ${driver}: cannot ${what}: ${messageOf(err)}`, { subject: driver, cause: err });
    }
  };

  async function setNodeID(driver: string, nodeID: string | undefined, labels: Readonly<Record<string, string>>): Promise<Node> {
    const node = await rest.get<Node>(nodePath);
    const ids = Object.fromEntries(Object.entries(nodeIDs(node)).filter(([name]) => name !== driver));
    if (nodeID !== undefined) ids[driver] = nodeID;
    const annotation = Object.keys(ids).length === 0 ? null : JSON.stringify(ids);
    return await rest.patch<Node>(nodePath, 'merge', { metadata: { annotations: { [NODE_ID_ANNOTATION]: annotation }, ...(Object.keys(labels).length === 0 ? {} : { labels }) } });
  }

  async function setEntry(node: Node | undefined, driver: string, entry: CSINodeDriver | undefined): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const current = await getIfExists<CSINode>(rest, csiNodePath);
      const others = (current?.spec.drivers ?? []).filter((d) => d.name !== driver);
      const drivers = entry === undefined ? others : [...others, entry];
      try {
        if (current === undefined) {
          if (entry === undefined) return;
          const owner = node?.metadata?.uid === undefined ? {} : { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: node.metadata.uid }] };
          await rest.create(CSINODES, { apiVersion: 'storage.orch.io/v1', kind: 'CSINode', metadata: { name: nodeName, ...owner }, spec: { drivers } });
        } else {
          await rest.update(csiNodePath, { ...current, spec: { drivers } });
        }
        return;
      } catch (err) {
        // A conflict (another writer) or a create that raced: read again, a few times.
        const code = statusOf(err)?.code;
        if (attempt >= 4 || (code !== 409 && code !== 422)) throw err;
      }
    }
  }

  return {
    add: (driver: string, info: NodeInfo) =>
      wrap(driver, `publish its node info on Node ${nodeName}`, async () => {
        const node = await setNodeID(driver, info.nodeId, info.topology);
        const allocatable = info.maxVolumesPerNode > 0 ? { allocatable: { count: info.maxVolumesPerNode } } : {};
        await setEntry(node, driver, { name: driver, nodeID: info.nodeId, topologyKeys: Object.keys(info.topology).sort(), ...allocatable });
      }),
    remove: (driver: string) =>
      wrap(driver, `remove its node info from Node ${nodeName}`, async () => {
        const node = await setNodeID(driver, undefined, {});
        await setEntry(node, driver, undefined);
      }),
  };
}
