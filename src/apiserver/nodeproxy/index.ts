/**
 * nodeproxy: the subresources the node agents answer: pods/log (a streamed GET of the agent's
 * /containerLogs), pods/exec, pods/attach and pods/portforward (WebSocket and SPDY upgrades
 * relayed to the agent's /exec, /attach and /portForward), and nodes/proxy (any path of the
 * agent's secure port). The agent is found through the node (its InternalIP and
 * status.daemonEndpoints.nodeagentEndpoint.Port) and reached over HTTPS with the server's
 * --nodeagent-client-certificate, verified with --nodeagent-certificate-authority.
 *
 * Owns: the translation of the API's options into the agent's paths and the relay. Must not:
 * write objects, or serve anything but these connect subresources.
 */
import type { ResourceRegistry } from '../registry/index.js';
import type { Connector } from '../routing/index.js';
import { logConnector } from './logs.js';
import { nodeProxyConnector } from './node.js';
import { streamConnectors } from './stream.js';
import type { NodeAgentTls } from './target.js';

export { agentRequestOptions, chooseContainer, locatePod, nodeTarget, DEFAULT_NODEAGENT_PORT, type NodeAgentTls, type NodeTarget } from './target.js';
export { V4, V5 } from './stream.js';

export interface NodeProxyOptions {
  /** The nodes registry (read to find a pod's node agent). */
  readonly nodes: () => ResourceRegistry;
  readonly tls: NodeAgentTls;
  readonly log: (message: string) => void;
}

/** The connectors of pods/log, pods/exec, pods/attach, pods/portforward and nodes/proxy. */
export function nodeProxyConnectors(options: NodeProxyOptions): Connector[] {
  return [logConnector(options), ...streamConnectors(options), nodeProxyConnector(options)];
}
