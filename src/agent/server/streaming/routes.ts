/**
 * The debugging handlers that run things in containers: /exec and /attach
 * ({namespace}/{pod}[/{uid}]/{container}), /portForward ({namespace}/{pod}[/{uid}]) as streams
 * to the runtime's streaming server, and /run (POST, cmd=...), which runs a command to
 * completion through CRI ExecSync and answers its output. Checks in upstream's order: options
 * (400), pod (404), container (404 here; upstream answers 500), upgrade (400 "Upgrade request
 * required"), then the runtime. The stream is served by the client's protocol: a SPDY upgrade
 * is relayed as it is; a WebSocket offering v5.channel.k8s.io is translated to SPDY
 * (translate.ts); one tunnelling SPDY (`SPDY/3.1+portforward.k8s.io`) is unwrapped onto a SPDY
 * connection; other WebSocket protocols are relayed message by message (proxy.ts).
 */
import type { NodePod } from '../../../api/pod/index.js';
import { isNotFound, messageOf } from '../../../api/errors.js';
import { CONTAINER_NAME_LABEL, POD_UID_LABEL } from '../../kuberuntime/index.js';
import type { Logger } from '../../logging/index.js';
import { findPod, type PodsView, type ServerCri } from '../host.js';
import { HttpError, JSON_TYPE, readBody } from '../http.js';
import type { RequestContext, Route } from '../router.js';
import { isWebSocketRequest, offeredProtocols, proxyWebSocket, requireUpgrade, V5 } from './proxy.js';
import { translateV5 } from './translate.js';
import { isSpdyUpgrade, proxySpdyUpgrade, TUNNEL_PREFIX, tunnelSpdy, type RelayOptions } from './upgrade.js';
import { quoteValue } from '../../../api/quote.js';

export interface StreamOptions {
  readonly stdin: boolean;
  readonly stdout: boolean;
  readonly stderr: boolean;
  readonly tty: boolean;
}

const flag = (q: URLSearchParams, name: string): boolean => q.get(name) === '1' || q.get(name) === 'true';

/** upstream's remotecommand options: "1" means yes; tty drops stderr; one stream at least. */
export function parseStreamOptions(q: URLSearchParams): StreamOptions {
  const tty = flag(q, 'tty');
  const o = { stdin: flag(q, 'stdin'), stdout: flag(q, 'stdout'), stderr: flag(q, 'stderr') && !tty, tty };
  if (!o.stdin && !o.stdout && !o.stderr) throw new HttpError(400, 'you must specify at least 1 of stdin, stdout, stderr');
  return o;
}

/** The ports of a WebSocket port-forward request (`port=`, repeated). */
export function parsePorts(q: URLSearchParams): number[] {
  const raw = q.getAll('port');
  if (raw.length === 0) throw new HttpError(400, 'query parameter "port" is required');
  return raw.map((p) => {
    if (!/^\d+$/.test(p) || Number(p) > 65535) throw new HttpError(400, `unable to parse ${quoteValue(p)} as a port: invalid syntax`);
    if (Number(p) === 0) throw new HttpError(400, `port ${quoteValue(p)} must be > 0`);
    return Number(p);
  });
}

export interface StreamingRoutesOptions {
  readonly pods: PodsView;
  readonly cri: ServerCri;
  readonly idleTimeoutMs: number;
  readonly logger: Logger;
}

function podOf(o: StreamingRoutesOptions, params: Readonly<Record<string, string>>): NodePod {
  const pod = findPod(o.pods, params.namespace ?? '', params.pod ?? '');
  if (pod === undefined) throw new HttpError(404, 'pod does not exist');
  if (params.uid !== undefined && pod.metadata.uid !== params.uid) throw new HttpError(404, 'pod not found');
  return pod;
}

async function runningContainerId(cri: ServerCri, pod: NodePod, name: string): Promise<string> {
  const list = await cri.listContainers({
    state: { state: 'CONTAINER_RUNNING' },
    labelSelector: { [POD_UID_LABEL]: pod.metadata.uid, [CONTAINER_NAME_LABEL]: name },
  });
  const newest = [...list].sort((a, b) => Number(BigInt(b.createdAt) - BigInt(a.createdAt)))[0];
  if (newest === undefined) throw new HttpError(404, `container not found (${quoteValue(name)})`);
  return newest.id;
}

/** The runtime's answer as upstream's streaming.WriteError maps it. */
function runtimeError(err: unknown): HttpError {
  return new HttpError(isNotFound(err) ? 404 : 500, messageOf(err));
}

/** The tunnelling subprotocol a WebSocket port-forward offers, if any. */
function tunnelProtocol(ctx: RequestContext): string | undefined {
  return isWebSocketRequest(ctx.req) ? offeredProtocols(ctx.req).find((p) => p.startsWith(TUNNEL_PREFIX)) : undefined;
}

/** Serves the checked upgrade of `ctx` with the runtime's stream at `url` in the client's protocol. */
async function serveStream(ctx: RequestContext, url: string, opts: StreamOptions | undefined, relay: RelayOptions): Promise<void> {
  if (isSpdyUpgrade(ctx.req)) return proxySpdyUpgrade(ctx, url, relay);
  const tunnel = tunnelProtocol(ctx);
  if (opts === undefined && tunnel !== undefined) return tunnelSpdy(ctx, url, tunnel, relay);
  if (opts !== undefined && offeredProtocols(ctx.req).includes(V5)) return translateV5(ctx, url, opts, relay);
  return proxyWebSocket(ctx, url, relay);
}

export function streamingRoutes(o: StreamingRoutesOptions): Route[] {
  const proxy = { idleTimeoutMs: o.idleTimeoutMs, logger: o.logger };
  const exec = async (ctx: RequestContext): Promise<void> => {
    const opts = parseStreamOptions(ctx.url.searchParams);
    const cmd = ctx.url.searchParams.getAll('command');
    if (cmd.length === 0) throw new HttpError(400, 'query parameter "command" is required');
    const pod = podOf(o, ctx.params);
    const id = await runningContainerId(o.cri, pod, ctx.params.container ?? '');
    requireUpgrade(ctx);
    const url = await o.cri.exec({ containerId: id, cmd, ...opts }).catch((err: unknown) => { throw runtimeError(err); });
    await serveStream(ctx, url, opts, proxy);
  };
  const attach = async (ctx: RequestContext): Promise<void> => {
    const opts = parseStreamOptions(ctx.url.searchParams);
    const pod = podOf(o, ctx.params);
    const id = await runningContainerId(o.cri, pod, ctx.params.container ?? '');
    requireUpgrade(ctx);
    const url = await o.cri.attach({ containerId: id, ...opts }).catch((err: unknown) => { throw runtimeError(err); });
    await serveStream(ctx, url, opts, proxy);
  };
  const portForward = async (ctx: RequestContext): Promise<void> => {
    // SPDY clients (raw or tunnelled) name the port of each stream in its headers.
    const ports = isWebSocketRequest(ctx.req) && tunnelProtocol(ctx) === undefined ? parsePorts(ctx.url.searchParams) : [];
    const pod = podOf(o, ctx.params);
    requireUpgrade(ctx);
    const { uid } = pod.metadata;
    const sandboxes = await o.cri.listPodSandbox({ state: { state: 'SANDBOX_READY' }, labelSelector: { [POD_UID_LABEL]: uid } });
    const sandbox = [...sandboxes].sort((a, b) => Number(BigInt(b.createdAt) - BigInt(a.createdAt)))[0];
    if (sandbox === undefined) throw new HttpError(404, `pod sandbox of ${quoteValue(pod.metadata.name)} not found`);
    const url = await o.cri.portForward({ podSandboxId: sandbox.id, port: ports }).catch((err: unknown) => { throw runtimeError(err); });
    await serveStream(ctx, url, undefined, proxy);
  };
  const run = async (ctx: RequestContext): Promise<void> => {
    const pod = podOf(o, ctx.params);
    const form = new URLSearchParams(ctx.url.searchParams);
    if ((ctx.req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
      for (const [k, v] of new URLSearchParams((await readBody(ctx.req)).toString('utf8'))) form.append(k, v);
    }
    const cmd = (form.get('cmd') ?? '').split(' ');
    if (cmd.every((c) => c === '')) throw new HttpError(400, 'query parameter "cmd" is required');
    const id = await runningContainerId(o.cri, pod, ctx.params.container ?? '');
    const r = await o.cri.execSync({ containerId: id, cmd, timeout: 0 }).catch((err: unknown) => { throw runtimeError(err); });
    const output = Buffer.concat([r.stdout, r.stderr]);
    if (r.exitCode !== 0) throw new HttpError(500, `command '${cmd.join(' ')}' exited with ${r.exitCode}: ${output.toString('utf8')}`);
    ctx.res.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': output.length }).end(output);
  };
  const both = ['GET', 'POST'];
  return [
    { pattern: '/exec/:namespace/:pod/:container', methods: both, bucket: 'exec', longRunning: true, handle: exec },
    { pattern: '/exec/:namespace/:pod/:uid/:container', methods: both, bucket: 'exec', longRunning: true, handle: exec },
    { pattern: '/attach/:namespace/:pod/:container', methods: both, bucket: 'attach', longRunning: true, handle: attach },
    { pattern: '/attach/:namespace/:pod/:uid/:container', methods: both, bucket: 'attach', longRunning: true, handle: attach },
    { pattern: '/portForward/:namespace/:pod', methods: both, bucket: 'portForward', longRunning: true, handle: portForward },
    { pattern: '/portForward/:namespace/:pod/:uid', methods: both, bucket: 'portForward', longRunning: true, handle: portForward },
    { pattern: '/run/:namespace/:pod/:container', methods: ['POST'], bucket: 'run', handle: run },
    { pattern: '/run/:namespace/:pod/:uid/:container', methods: ['POST'], bucket: 'run', handle: run },
  ];
}
