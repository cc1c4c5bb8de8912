/**
 * The registry of error codes: every stable `code` an OrchError carries, with what it means.
 * Codes are UPPER_SNAKE with the module's prefix; a test (error-codes.test.ts) keeps this list
 * and the code in sync, both ways. Users and tools may match on these codes; never on messages.
 */

/** The prefixes of the modules' codes (a literal with one of them is a code). */
export const ERROR_CODE_PREFIXES = [
  'API', 'APISERVER', 'AUTHN', 'AUTHZ', 'CERT', 'CM', 'CONFIG', 'CONTAINERLOGS', 'CREDENTIAL', 'CRI', 'EVENTS', 'GC', 'KUBERUNTIME', 'NODE',
  'ORCHCLIENT', 'PODSOURCE', 'SERVER', 'STARTUP', 'STORE', 'VOLUME',
] as const;

export const ERROR_CODES: Readonly<Record<string, string>> = {
  // src/api
  API_INVALID_DURATION: 'a duration is not in Go form (300ms, 1m30s, 2h45m)',
  API_INVALID_QUANTITY: 'a resource quantity is malformed (10Mi, 1Gi, 200m, 1e3)',
  API_QUANTITY_OUT_OF_RANGE: 'a quantity asked for as an integer is outside int64',
  API_INVALID_KEY_VALUE: 'a key=value list is malformed',
  API_INVALID_TAINT: 'a taint is not key[=value]:Effect',
  API_TOKEN_BUCKET_INVALID: 'a token bucket was asked for with a qps not above 0 or a burst not an integer of at least 1',
  // src/agent/config
  CONFIG_INVALID: 'the configuration has problems; each is listed',
  CONFIG_FILE_UNREADABLE: 'the --config file cannot be read',
  CONFIG_FILE_MALFORMED: 'a configuration file is not YAML or JSON (file:line:col given)',
  CONFIG_DROPIN_DIR: 'the drop-in directory cannot be read',
  CREDENTIAL_PROVIDER_CONFIG_INVALID: 'the credential provider config has problems; each is listed',
  // src/agent/startup
  STARTUP_SWAP_ON: 'swap is on and failSwapOn is true',
  STARTUP_SWAP_UNREADABLE: '/proc/swaps cannot be read',
  STARTUP_KERNEL_TUNABLES: 'protectKernelDefaults is true and kernel tunables differ',
  STARTUP_OOM_SCORE_ADJ_INVALID: 'oomScoreAdj is outside [-1000, 1000]',
  STARTUP_MAX_OPEN_FILES_INVALID: 'maxOpenFiles is not a non-negative integer',
  STARTUP_LOCK_FILE_REQUIRED: '--exit-on-lock-contention without --lock-file',
  STARTUP_LOCK_FILE: 'the lock file cannot be created or locked',
  STARTUP_DATA_DIRS: 'a directory under --root-dir cannot be created',
  NODE_NAME_INVALID: 'the node name (hostname or --hostname-override) is not a DNS subdomain',
  // src/agent/runtime/cri
  CRI_TIMEOUT: 'a runtime call passed runtimeRequestTimeout (cancelled; retried on a later sync)',
  CRI_UNAVAILABLE: 'the container runtime does not answer at its endpoint',
  CRI_NOT_FOUND: 'the runtime does not know the sandbox, container or image',
  CRI_CANCELLED: 'the caller cancelled the runtime call',
  CRI_CLOSED: 'a runtime call after the client was closed',
  CRI_ERROR: 'the runtime refused a call (its message is kept)',
  CRI_INVALID_ENDPOINT: 'the runtime or image endpoint is not unix:///<path>',
  CRI_INVALID_TIMEOUT: 'a request timeout is not a positive number',
  CRI_PROTO_MISSING: 'proto/cri-v1.proto is missing from the installation',
  // src/agent/server, src/agent/orchclient
  SERVER_TLS_INVALID: "the serving certificate or key cannot be read, parsed or generated",
  SERVER_CONFIG_INVALID: 'a server setting cannot be applied (address, TLS version, cipher suites)',
  SERVER_NO_SERVING_CERTIFICATE: 'serverTLSBootstrap: no serving certificate has been issued yet (or it expired); TLS handshakes fail',
  // src/agent/certificate
  CERT_CSR_DENIED: 'the certificate signing request was denied',
  CERT_CSR_FAILED: 'the signer set Failed on the certificate signing request, or it was deleted',
  CERT_CSR_TIMEOUT: 'no certificate was issued before the deadline',
  CERT_CSR_CONFLICT: 'a same-named certificate signing request exists for another key, signer or usages',
  CERT_ISSUED_INVALID: 'the issued certificate cannot be parsed, is not for our key, or has expired',
  CERT_STORE_INVALID: 'a certificate file in --cert-dir cannot be read, parsed or written',
  CERT_ORCHCONFIG_WRITE: 'the --orchconfig file cannot be read or written',
  CERT_BOOTSTRAP_CONFIG_MISSING: 'a client certificate is needed but --bootstrap-orchconfig is not set',
  CERT_CANCELLED: 'waiting for a certificate was stopped',
  // src/agent/nodestatus
  NODE_MACHINE_INFO_UNREADABLE: '/proc/meminfo cannot be read or has no MemTotal',
  NODE_RESOURCE_INVALID: 'a reserved amount or hard eviction threshold does not parse',
  NODE_LEASE_UPDATE_FAILED: 'the node lease was not renewed in 5 tries (logged; tried again at the next interval)',
  ORCHCLIENT_ABORTED: "the caller's signal fired or the client was closed before the answer came",
  ORCHCLIENT_OPTIONS_INVALID: 'REST client or rate-limiter options are out of range (negative QPS, burst below 1)',
  ORCHCLIENT_WATCH_DECODE_FAILED: 'a watch stream line is not a JSON watch event, or is over 16 MiB',
  ORCHCLIENT_CONFIG_INVALID: 'the --orchconfig file is malformed or names missing files',
  ORCHCLIENT_REQUEST_FAILED: 'the API server refused a request (its Status message is kept)',
  ORCHCLIENT_TIMEOUT: 'a request to the API server timed out',
  ORCHCLIENT_UNAVAILABLE: 'the API server cannot be reached',
  // src/agent/kuberuntime
  KUBERUNTIME_ENV_INVALID: 'a container env value refers to something the agent cannot resolve',
  KUBERUNTIME_ENV_SOURCE_UNAVAILABLE: 'a ConfigMap or Secret a container env names cannot be read (no API server, or the read failed)',
  KUBERUNTIME_ENV_REFERENCE_NOT_FOUND: 'a ConfigMap, Secret or key a container env names does not exist and is not optional',
  KUBERUNTIME_INVALID_IMAGE: 'an image reference is malformed',
  KUBERUNTIME_SANDBOX_CONFIG_INVALID: 'the pod sandbox configuration cannot be built',
  KUBERUNTIME_RUN_AS_NON_ROOT: 'runAsNonRoot is set and the container would run as root',
  KUBERUNTIME_KILL_FAILED: 'containers of a pod could not be stopped',
  KUBERUNTIME_REMOVE_FAILED: 'containers or sandboxes of a pod could not be removed',
  // src/agent/containerlogs
  CONTAINERLOGS_ROTATE_FAILED: "a container's log could not be rotated (renamed, reopened by the runtime, compressed); logged and tried again at the next check",
  CONTAINERLOGS_INVALID_OPTIONS: 'the container log manager was asked for with a size, file count, worker count or period out of range',
  // src/agent/gc
  GC_CONTAINER_FAILED: 'removals of a container garbage collection pass failed (each named); tried again at the next pass',
  GC_IMAGE_FREE_FAILED: 'image garbage collection could not free enough space: "wanted to free X bytes, but freed Y bytes"',
  GC_INVALID_PERIOD: 'NODEAGENT_CONTAINER_GC_PERIOD or NODEAGENT_IMAGE_GC_PERIOD is not a positive Go duration',
  GC_IMAGE_FS_UNKNOWN: 'the image file system cannot be found (ImageFsInfo, the runtime root) or measured (statfs)',
  // src/agent/podsource
  PODSOURCE_UNKNOWN_SOURCE: 'a snapshot was pushed for a source that was not declared',
  // src/agent/volumes
  VOLUME_HOSTPATH_TYPE: 'a hostPath is not of the type the volume asks for',
  VOLUME_UNSUPPORTED: 'a volume type needs the API server or is not supported',
  VOLUME_INVALID: 'a volume or mount is malformed',
  VOLUME_OBJECT_NOT_FOUND: 'a configMap or secret a volume needs does not exist and is not optional',
  VOLUME_KEY_NOT_FOUND: 'a volume item names a key its object lacks and is not optional',
  VOLUME_OBJECT_UNAVAILABLE: 'reading a configMap or secret for a volume from the API server failed',
  VOLUME_TOKEN_UNAVAILABLE: 'a service account token for a projected volume could not be had from the API server',
  VOLUME_WRITE_FAILED: 'the files of a configMap, secret, projected or downwardAPI volume could not be written',
  // src/agent/events
  EVENTS_INVALID_OPTIONS: 'the event recorder options are out of range (qps, burst, reporting instance)',
  VOLUME_SUBPATH_INVALID: 'a subPath escapes its volume',
  VOLUME_MOUNT_FAILED: 'a mount (tmpfs) failed',
  VOLUME_CLEANUP_FAILED: "a pod's volumes could not be unmounted or removed",
  VOLUME_MOUNTINFO_INVALID: '/proc/self/mountinfo could not be parsed',
  // src/agent/cm
  CM_INVALID: 'a cgroup setting is malformed',
  CM_NO_CGROUPS: 'no cgroup hierarchy is mounted',
  CM_CGROUP_BUSY: 'a pod cgroup stayed busy until the deadline',
  CM_CGROUP_FAILED: 'a cgroup directory could not be created, read or removed',
  // src/apiserver
  APISERVER_INVALID_FLAGS: 'orch-apiserver flags are invalid; each problem is listed',
  APISERVER_LISTEN: 'the secure port cannot be bound',
  APISERVER_ORCHCONFIG: 'the admin orchconfig file cannot be written',
  APISERVER_PKI: 'the serving or CA certificate cannot be read or generated',
  APISERVER_POLICY_INVALID: 'the authorization policy file is malformed',
  APISERVER_SERVICE_ACCOUNT_KEY_INVALID: 'a service account key file cannot be read or holds no usable RSA or ECDSA key',
  APISERVER_STORAGE_UNREACHABLE: 'the storage backend cannot be reached at start',
  APISERVER_TOKEN_FILE_INVALID: 'a line of the token file is malformed',
  APISERVER_TOKEN_FILE_UNREADABLE: 'the token file cannot be read',
  APISERVER_PROTO_MISSING: 'the .proto files of the protobuf encoding (proto/orch) cannot be found',
  APISERVER_METRICS_READ_ONLY: 'a write or watch of the resource metrics API, which is read-only',
  // src/apiserver/storage
  STORE_NOT_FOUND: 'no object at the key',
  STORE_ALREADY_EXISTS: 'an object already exists at the key',
  STORE_CONFLICT: 'the object changed since the resourceVersion given',
  STORE_PRECONDITION_FAILED: 'the uid or resourceVersion precondition does not hold',
  STORE_RV_TOO_OLD: 'a watch from a compacted resourceVersion (410 Gone)',
  STORE_RV_TOO_LARGE: 'a resourceVersion newer than the store has',
  STORE_CONTINUE_EXPIRED: "a continue token's revision was compacted (410 Expired)",
  STORE_INVALID_CONTINUE: 'a continue token is malformed',
  STORE_INVALID_KEY: 'a storage key is malformed',
  STORE_INVALID_OBJECT: 'an object cannot be stored (not JSON, no metadata)',
  STORE_INVALID_OPTION: 'a storage option is out of range',
  STORE_INVALID_RESOURCE_VERSION: 'a resourceVersion is not a decimal revision',
  STORE_UNAVAILABLE: 'the store (etcd, the SQLite file) cannot be reached',
  STORE_INTERNAL: 'the store failed unexpectedly',
};
