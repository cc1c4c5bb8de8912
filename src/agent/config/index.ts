/**
 * The configuration layer of nodeagent: flags (pflag semantics), the configuration file
 * (nodeagent.config.orch.io/v1beta1), drop-ins, precedence, defaults, validation with every
 * error listed at once, feature gates, and `config print`.
 *
 * Owns: turning argv, the environment and files into one frozen effective configuration.
 * Must not: start anything, touch the host (startup checks live in ../startup), or be read
 * by modules through anything but the resolved object handed to them by the composition root.
 */
export { resolveConfiguration, flagDefaults, fileDefaults, DROPIN_ENV, ConfigurationError } from './resolve.js';
export type { ResolvedConfiguration, ResolveInput, Action } from './resolve.js';
export type { NodeagentConfiguration, LoggingConfiguration, TracingConfiguration, CredentialProviderConfig } from './types.js';
export { GROUP_VERSION, CONFIGURATION_KIND } from './types.js';
export { FLAGS, type CommandLineOptions } from './flags/table.js';
export type { FeatureGates } from './feature-gates.js';
export { helpText } from './flags/help.js';
export { agentHelpText, flagDefaultText } from './help-defaults.js';
export { renderConfiguration, splitPrintArgs, toWireObject } from './print.js';
export type { PrintOptions, OutputFormat } from './print.js';
export { loadCredentialProviderConfig } from './credential-provider.js';
export { SECURE_CIPHER_SUITES, INSECURE_CIPHER_SUITES } from './validate-values.js';
