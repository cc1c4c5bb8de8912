/**
 * Action subresources: a POST of a body of another kind onto a named object (pods/binding's
 * Binding), answered by the action with a code and a body (a Status). The connector reads the
 * body within the size limit, decodes it strictly against the action's kind (unknown fields as
 * `fieldValidation` says, default Strict), and answers in the negotiated JSON or YAML; dryRun=All
 * is passed on. Failures are StatusErrors answered by the router.
 */
import { decodeBody, negotiate, readBody, send, warningHeaders } from '../http/index.js';
import { decodeObject, type RequestUser, type ResourceDefinition, type ResourceRegistry, type WireObject } from '../registry/index.js';
import type { ConnectRequest, Connector } from './connect.js';

export interface ActionRequest {
  /** The registry of the parent resource (pods for pods/binding). */
  readonly registry: ResourceRegistry;
  readonly namespace: string;
  readonly name: string;
  /** The decoded body, of the action's kind. */
  readonly body: WireObject;
  readonly user: RequestUser;
  readonly now: Date;
  readonly dryRun: boolean;
}

export interface Action {
  readonly group: string;
  readonly resource: string;
  readonly subresource: string;
  /** The kind of the body (its group, version and schema). */
  readonly body: Pick<ResourceDefinition, 'group' | 'version' | 'kind' | 'schema'>;
  /** Does the work; throws StatusError. */
  act(request: ActionRequest): Promise<{ readonly code: number; readonly body: unknown }>;
}

export interface ActionConnectorOptions {
  readonly maxRequestBytes: number;
  readonly now?: () => Date;
}

/** The connector that serves `action` (POST only: the router checks the subresource's verbs). */
export function actionConnector(action: Action, options: ActionConnectorOptions): Connector {
  const now = options.now ?? (() => new Date());
  return {
    group: action.group,
    resource: action.resource,
    subresource: action.subresource,
    async serve(r: ConnectRequest): Promise<void> {
      const pretty = r.query.bool('pretty');
      const output = negotiate(r.req.headers.accept, ['yaml'], pretty);
      const fieldValidation = r.query.oneOf('fieldValidation', ['Strict', 'Warn', 'Ignore'], 'Strict');
      const parsed = decodeBody(await readBody(r.req, options.maxRequestBytes), r.req.headers['content-type']);
      const decoded = decodeObject(action.body, parsed, fieldValidation);
      const result = await action.act({
        registry: r.registry, namespace: r.namespace, name: r.name, body: decoded.object, user: r.user, now: now(), dryRun: r.query.dryRun(),
      });
      send(r.res, result.code, result.body, output, warningHeaders(decoded.warnings));
    },
  };
}
