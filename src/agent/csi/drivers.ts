/**
 * The CSI drivers registered on this node (upstream: pkg/volume/csi's csiPlugin registration
 * handler and csiDrivers map). The plugin watcher hands each `CSIPlugin` registration here: its
 * versions must hold a 1.x, then NodeGetInfo tells the driver's node ID, topology and volume
 * limit, which the injected `publishNodeInfo` writes to the Node and its CSINode; only then can
 * the driver's volumes be mounted. A driver that deregisters is forgotten (and its node info
 * removed); a driver registering again replaces its endpoint.
 */
import { OrchError } from '../../api/errors.js';
import type { Logger } from '../logging/index.js';
import type { PluginHandler } from '../pluginmanager/index.js';
import { csiErrorText, dialCsi, type CsiNodeClient, type NodeInfo } from './client.js';
import { CSI_DRIVER_INVALID, CSI_DRIVER_NOT_REGISTERED } from './errors.js';

/** Writes a driver's node info where the cluster sees it (the Node annotation and labels, the CSINode entry). */
export interface NodeInfoPublisher {
  add(driver: string, info: NodeInfo): Promise<void>;
  remove(driver: string): Promise<void>;
}

export interface CsiDrivers {
  /** The CSIPlugin handler of the plugin watcher. */
  readonly pluginHandler: PluginHandler;
  /** The client of a registered driver; throws CSI_DRIVER_NOT_REGISTERED naming it. */
  client(driver: string): CsiNodeClient;
  /** The registered drivers' names, sorted. */
  names(): string[];
}

export interface CsiDriversOptions {
  readonly logger: Logger;
  readonly publisher?: NodeInfoPublisher;
  /** Makes a driver's client (tests inject a fake). */
  readonly dial?: (endpoint: string) => CsiNodeClient;
  /** The deadline of each call to a driver (default upstream's 2 minutes). */
  readonly callTimeoutMs?: number;
}

/** The versions upstream accepts: any 1.x (the highest is used). */
function supported(versions: readonly string[]): boolean {
  return versions.some((v) => /^v?1(\.\d+){0,2}$/.test(v));
}

export function createCsiDrivers(options: CsiDriversOptions): CsiDrivers {
  const dial = options.dial ?? ((endpoint: string) => dialCsi(endpoint, options.callTimeoutMs));
  const drivers = new Map<string, { endpoint: string; client: CsiNodeClient }>();
  const pluginHandler: PluginHandler = {
    validatePlugin(name, _endpoint, versions) {
      if (name === '') throw new OrchError(CSI_DRIVER_INVALID, 'invalid', 'the CSI driver registered with an empty name');
      if (!supported(versions)) {
        throw new OrchError(CSI_DRIVER_INVALID, 'invalid', `CSI driver ${name}: none of the requested versions [${versions.join(', ')}] is supported (supported: 1.x)`, { subject: name });
      }
    },
    async registerPlugin(name, endpoint) {
      const client = dial(endpoint);
      let info: NodeInfo;
      try {
        info = await client.nodeGetInfo();
      } catch (err) {
        client.close();
        throw new OrchError(CSI_DRIVER_INVALID, 'unavailable', `CSI driver ${name}: NodeGetInfo failed: ${csiErrorText(err)}`, { subject: name, cause: err });
      }
      if (info.nodeId === '') {
        client.close();
        throw new OrchError(CSI_DRIVER_INVALID, 'invalid', `CSI driver ${name}: NodeGetInfo returned an empty node_id`, { subject: name });
      }
      drivers.get(name)?.client.close();
      drivers.set(name, { endpoint, client });
      try {
        await options.publisher?.add(name, info);
      } catch (err) {
        drivers.delete(name);
        client.close();
        throw err;
      }
      options.logger.info('registered CSI driver', { driver: name, endpoint, nodeID: info.nodeId, topology: info.topology });
    },
    async deregisterPlugin(name, endpoint) {
      const known = drivers.get(name);
      if (known?.endpoint !== endpoint) return;
      drivers.delete(name);
      known.client.close();
      options.logger.info('deregistered CSI driver', { driver: name });
      await options.publisher?.remove(name);
    },
  };
  return {
    pluginHandler,
    client(driver) {
      const known = drivers.get(driver);
      if (known === undefined) {
        throw new OrchError(CSI_DRIVER_NOT_REGISTERED, 'unavailable', `driver name ${driver} not found in the list of registered CSI drivers`, { subject: driver });
      }
      return known.client;
    },
    names: () => [...drivers.keys()].sort(),
  };
}
