/**
 * The credentials of one pull (upstream: the keyring MakeDockerKeyring builds for a pod): the
 * pod's pull secrets first, then what the credential provider plugins give, each tried in turn
 * until a pull succeeds. A plugin that fails is logged and recorded as a Warning event on the
 * pod naming the plugin; the pull goes on with the other credentials.
 */
import type { NodePod } from '../../api/pod/index.js';
import { podNamespacedName } from '../../api/pod/index.js';
import type { Logger } from '../logging/index.js';
import type { PodEvent } from '../prober/index.js';
import type { AuthConfig } from '../runtime/cri/index.js';
import type { CredentialProviders } from './providers.js';

/** The event reason of a failed plugin run. */
export const CREDENTIAL_PROVIDER_FAILED_REASON = 'FailedCredentialProvider';

export interface PullKeyringOptions {
  /** The pod's pull secrets (API-server mode); undefined credentials: none matches. */
  readonly secrets?: ((pod: NodePod, repository: string) => Promise<AuthConfig | undefined>) | undefined;
  readonly providers?: CredentialProviders | undefined;
  readonly logger: Logger;
  /** Where the failure events go (after the log line). */
  readonly onEvent?: ((event: PodEvent) => void) | undefined;
}

/** The runtime manager's pull-credentials function; undefined when there is nothing to ask. */
export function pullKeyring(options: PullKeyringOptions): ((pod: NodePod, repository: string) => Promise<readonly AuthConfig[]>) | undefined {
  const { secrets, providers, logger } = options;
  if (secrets === undefined && providers === undefined) return undefined;
  return async (pod, repository) => {
    const fromSecrets = secrets === undefined ? undefined : await secrets(pod, repository);
    const fromPlugins = providers === undefined ? [] : await providers.lookup(repository, (failure) => {
      // The error names the plugin and the image already.
      const message = `${failure.error.message}; pulling with the other credentials`;
      logger.warn('Image credential provider plugin failed; pulling with the other credentials', {
        plugin: failure.plugin, image: failure.image, pod: podNamespacedName(pod), err: failure.error.message,
      });
      options.onEvent?.({ type: 'Warning', reason: CREDENTIAL_PROVIDER_FAILED_REASON, message, pod });
    });
    return [...(fromSecrets === undefined ? [] : [fromSecrets]), ...fromPlugins];
  };
}
