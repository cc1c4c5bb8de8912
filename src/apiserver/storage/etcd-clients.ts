/**
 * The etcd store's two etcd3 clients, each with its own gRPC channel and HTTP/2 connection per
 * member: one for unary calls (range, txn, lease grants, compaction), one for the watches.
 *
 * Apart, a unary call that fails cannot make etcd3 reset the channel the watches ride on (it
 * resets a member's whole channel, every service of that client, on a connection-level
 * failure), and a burst of watch events cannot hold up unary calls behind it on the same
 * connection (etcd writes every response of a connection through one HTTP/2 writer, under one
 * connection-level flow-control window). Two etcd3 clients alone would still share one
 * connection: grpc-js pools its subchannels process-wide by address and options, so the watch
 * client takes a subchannel pool of its own.
 *
 * gRPC keepalive detects a connection that no longer answers (a member gone without closing
 * it) and fails its calls as unavailable, which etcd3 answers by reconnecting; a call's deadline
 * does not (etcd-faults.ts).
 */
import { Etcd3, type IOptions } from 'etcd3';
import { etcdFaultHandling, type EtcdFaultOptions } from './etcd-faults.js';

export interface EtcdClientsOptions {
  readonly endpoints: readonly string[];
  /** The deadline of each unary call. */
  readonly requestTimeoutMs: number;
  readonly faults?: EtcdFaultOptions;
}

export interface EtcdClients {
  /** Range, txn, lease grants, compaction: every call with a deadline. */
  readonly unary: Etcd3;
  /** Watches only (no deadline: a watch stream lives as long as its watchers). */
  readonly watch: Etcd3;
  close(): void;
}

/** Pings an idle connection every 10 s (etcd refuses pings more often than every 5 s). */
const KEEPALIVE_TIME_MS = 10_000;
/** A ping unanswered for this long closes the connection. */
const KEEPALIVE_TIMEOUT_MS = 5_000;

function grpcOptions(ownPool: boolean): NonNullable<IOptions['grpcOptions']> {
  return {
    // Channelz (gRPC's introspection service, never served here) keeps counters, timestamps
    // and closures for every call: ~10% of the client's CPU per request, measured alone.
    'grpc.enable_channelz': 0,
    // grpc-js refuses answers over 4 MiB by default: an unpaged list of a large cluster's nodes or
    // leases is more (3,000 nodes: RESOURCE_EXHAUSTED, and the control loops could not start).
    // kube-apiserver's etcd client takes answers of any size too; etcd bounds what it sends.
    'grpc.max_receive_message_length': -1,
    'grpc.keepalive_time_ms': KEEPALIVE_TIME_MS,
    'grpc.keepalive_timeout_ms': KEEPALIVE_TIMEOUT_MS,
    ...(ownPool ? { 'grpc.use_local_subchannel_pool': 1 } : {}),
  };
}

export function openEtcdClients(options: EtcdClientsOptions): EtcdClients {
  const hosts = [...options.endpoints];
  const faultHandling = (): ReturnType<typeof etcdFaultHandling> => etcdFaultHandling(options.endpoints.length, options.faults);
  const unary = new Etcd3({
    hosts,
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + options.requestTimeoutMs }),
    grpcOptions: grpcOptions(false),
    faultHandling: faultHandling(),
  });
  const watch = new Etcd3({ hosts, grpcOptions: grpcOptions(true), faultHandling: faultHandling() });
  return {
    unary,
    watch,
    close: () => {
      watch.close();
      unary.close();
    },
  };
}
