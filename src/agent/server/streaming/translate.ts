/**
 * v5.channel.k8s.io for a runtime that speaks at most v4 over WebSocket (containerd 1.6): the
 * client's WebSocket stays v5, and the agent talks remotecommand v4 over SPDY to the runtime,
 * where a stream can be half-closed. Channel 0 (stdin) goes to the SPDY stdin stream, v5's
 * CLOSE signal for stdin (channel 255, payload 0) half-closes it (end-of-file in the container),
 * channel 4 (terminal size) goes to the resize stream; stdout, stderr and the error stream (its
 * Status) come back on channels 1, 2 and 3. The WebSocket closes when the runtime ends the
 * session; the SPDY connection closes when the client leaves. This is what upstream's API server
 * does between a v5 client and an SPDY kubelet.
 */
import type { WebSocket } from 'ws';
import { messageOf } from '../../../api/errors.js';
import { HttpError } from '../http.js';
import type { RequestContext } from '../router.js';
import { acceptWebSocket, closeCode, OPEN, V4, V5 } from './proxy.js';
import { FrameReader, FrameWriter, type Frame } from './spdy.js';
import { dialSpdy, type RelayOptions, type Upgraded } from './upgrade.js';
import type { StreamOptions } from './routes.js';
import { quoteValue } from '../../../api/quote.js';

const CHANNEL = { stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4, close: 255 } as const;

type StreamType = 'error' | 'stdin' | 'stdout' | 'stderr' | 'resize';

/** The SPDY streams of a session, by type, with client (odd) ids in upstream's creation order. */
function streamIds(opts: StreamOptions): Map<StreamType, number> {
  const types: StreamType[] = ['error'];
  if (opts.stdin) types.push('stdin');
  if (opts.stdout) types.push('stdout');
  if (opts.stderr) types.push('stderr');
  if (opts.tty) types.push('resize');
  return new Map(types.map((t, i) => [t, 2 * i + 1]));
}

/** Serves the (already checked) v5 WebSocket upgrade of `ctx` by SPDY to the runtime's `url`. */
export async function translateV5(ctx: RequestContext, url: string, opts: StreamOptions, o: RelayOptions): Promise<void> {
  const backend = await dialSpdy(url, [V4], o.handshakeTimeoutMs);
  if (backend.protocol !== V4) {
    backend.socket.destroy();
    throw new HttpError(500, `the runtime's streaming server chose ${quoteValue(backend.protocol)}, not ${V4}`);
  }
  const client = await acceptWebSocket(ctx, V5);
  if (client === undefined) {
    backend.socket.destroy();
    return;
  }
  bridge(client, backend, streamIds(opts), o);
}

function bridge(client: WebSocket, backend: Upgraded, ids: Map<StreamType, number>, o: RelayOptions): void {
  const writer = new FrameWriter();
  const reader = new FrameReader();
  const socket = backend.socket;
  const channelOf = new Map<number, number>([...ids].filter(([t]) => t === 'stdout' || t === 'stderr' || t === 'error').map(([t, id]) => [id, CHANNEL[t]]));
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  const end = (why: string): void => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    o.logger.v(4, 'Streaming session ended', { why });
    socket.destroy();
    if (client.readyState === OPEN) client.close(1000);
  };
  const touch = (): void => {
    if (o.idleTimeoutMs <= 0) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      o.logger.v(2, 'Closing an idle streaming connection', { idleTimeoutMs: o.idleTimeoutMs });
      end('idle timeout');
    }, o.idleTimeoutMs);
    timer.unref();
  };
  touch();
  for (const [type, id] of ids) socket.write(writer.synStream(id, { streamtype: type }));
  const toClient = (channel: number, data: Buffer): void => {
    if (client.readyState === OPEN) client.send(Buffer.concat([Buffer.from([channel]), data]), { binary: true });
  };
  const onFrame = (frame: Frame): void => {
    switch (frame.type) {
      case 'data': {
        const channel = channelOf.get(frame.streamId);
        if (channel !== undefined && frame.data.length > 0) toClient(channel, frame.data);
        return;
      }
      case 'ping':
        socket.write(writer.ping(frame.id));
        return;
      case 'goAway':
        end('the runtime ended the session');
        return;
      case 'rstStream':
        o.logger.v(4, 'The runtime reset a stream', { streamId: frame.streamId, status: frame.status });
        return;
      default:
        return;
    }
  };
  const onBytes = (chunk: Buffer): void => {
    touch();
    try {
      for (const frame of reader.push(chunk)) onFrame(frame);
    } catch (err) {
      o.logger.v(2, 'Streaming connection failed', { side: 'runtime', err: messageOf(err) });
      end('protocol error');
    }
  };
  if (backend.head.length > 0) onBytes(backend.head);
  socket.on('data', onBytes);
  socket.on('end', () => { end('the runtime closed the connection'); });
  socket.on('close', () => { end('the runtime connection closed'); });
  socket.on('error', (err) => {
    o.logger.v(2, 'Streaming connection failed', { side: 'runtime', err: err.message });
    end('runtime error');
  });
  const stdin = ids.get('stdin');
  const resize = ids.get('resize');
  let stdinClosed = false;
  client.on('message', (data, isBinary) => {
    touch();
    if (!isBinary || !Buffer.isBuffer(data) || data.length === 0) return;
    const channel = data[0];
    const payload = data.subarray(1);
    if (channel === CHANNEL.stdin && stdin !== undefined && !stdinClosed) {
      if (payload.length > 0) socket.write(writer.data(stdin, payload));
    } else if (channel === CHANNEL.resize && resize !== undefined) {
      socket.write(writer.data(resize, payload));
    } else if (channel === CHANNEL.close && payload[0] === CHANNEL.stdin && stdin !== undefined && !stdinClosed) {
      stdinClosed = true;
      socket.write(writer.data(stdin, Buffer.alloc(0), true));
    }
  });
  client.on('close', (code) => {
    o.logger.v(4, 'The client closed the stream', { code: closeCode(code) });
    end('the client left');
  });
  client.on('error', (err) => {
    o.logger.v(2, 'Streaming connection failed', { side: 'client', err: err.message });
    end('client error');
  });
}
