/**
 * The connection file of --orchconfig (kubeconfig format: clusters, users, contexts and
 * current-context) resolved to one connection: the server URL, the CA to trust, the client
 * certificate and key, and a bearer token (inline or from a file). Files named in it are
 * relative to the connection file's directory, as upstream resolves them; `*-data` fields hold
 * base64 PEM. Reading is strict: a missing context, cluster or user, an unreadable file or a
 * certificate without its key is an error naming the connection file.
 */
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse } from 'yaml';
import { OrchError, messageOf } from '../../api/errors.js';
import { quoteValue } from '../../api/quote.js';

export const ORCHCLIENT_CONFIG_INVALID = 'ORCHCLIENT_CONFIG_INVALID';

export interface OrchConnection {
  /** e.g. https://127.0.0.1:6443 (no trailing slash). */
  readonly server: string;
  /** PEM bundle to trust; undefined: the system's CAs. */
  readonly ca?: Buffer;
  readonly insecureSkipTLSVerify: boolean;
  /** SNI and the name checked in the server's certificate, when not the URL's host. */
  readonly tlsServerName?: string;
  readonly clientCert?: Buffer;
  readonly clientKey?: Buffer;
  readonly token?: string;
  /** Read again when older than a minute (a rotated token is picked up). */
  readonly tokenFile?: string;
  readonly username?: string;
  readonly password?: string;
}

type Named<T> = { readonly name: string } & T;

interface RawCluster {
  readonly server?: unknown;
  readonly 'certificate-authority'?: unknown;
  readonly 'certificate-authority-data'?: unknown;
  readonly 'insecure-skip-tls-verify'?: unknown;
  readonly 'tls-server-name'?: unknown;
}

interface RawUser {
  readonly 'client-certificate'?: unknown;
  readonly 'client-certificate-data'?: unknown;
  readonly 'client-key'?: unknown;
  readonly 'client-key-data'?: unknown;
  readonly token?: unknown;
  readonly tokenFile?: unknown;
  readonly username?: unknown;
  readonly password?: unknown;
}

function invalid(path: string, message: string, cause?: unknown): OrchError {
  return new OrchError(ORCHCLIENT_CONFIG_INVALID, 'invalid', `connection file ${path}: ${message}`, { subject: path, cause });
}

function optionalString(path: string, where: string, value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw invalid(path, `${where} must be a string`);
  return value;
}

function entries<T>(path: string, doc: Record<string, unknown>, list: string, item: string): Named<T>[] {
  const value = doc[list];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalid(path, `${list} must be a list`);
  return value.map((entry: unknown, i) => {
    if (typeof entry !== 'object' || entry === null) throw invalid(path, `${list}[${i}] must be an object`);
    const e = entry as Record<string, unknown>;
    const name = optionalString(path, `${list}[${i}].name`, e.name) ?? '';
    const body = e[item];
    if (body === undefined || body === null) return { ...({} as T), name };
    if (typeof body !== 'object') throw invalid(path, `${list}[${i}].${item} must be an object`);
    return { ...(body as T), name };
  });
}

function decodeData(path: string, field: string, value: string): Buffer {
  const data = Buffer.from(value, 'base64');
  if (data.length === 0) throw invalid(path, `${field} is not base64 data`);
  return data;
}

/** A PEM given inline (`<field>-data`, base64) or as a file (`<field>`, relative to the connection file). */
async function pem(path: string, where: string, inline: unknown, file: unknown): Promise<Buffer | undefined> {
  const data = optionalString(path, `${where}-data`, inline);
  if (data !== undefined) return decodeData(path, `${where}-data`, data);
  const name = optionalString(path, where, file);
  if (name === undefined) return undefined;
  const full = isAbsolute(name) ? name : resolve(dirname(path), name);
  try {
    return await readFile(full);
  } catch (err) {
    throw invalid(path, `cannot read ${where} ${full}: ${messageOf(err)}`, err);
  }
}

/**
 * Resolves the connection of `context` (default: current-context) from the parsed document.
 * `path` is the file's absolute path (for relative file names and messages).
 */
export async function resolveOrchconfig(doc: unknown, path: string, context?: string): Promise<OrchConnection> {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw invalid(path, 'is not a YAML or JSON object');
  const d = doc as Record<string, unknown>;
  const clusters = entries<RawCluster>(path, d, 'clusters', 'cluster');
  const users = entries<RawUser>(path, d, 'users', 'user');
  const contexts = entries<{ readonly cluster?: unknown; readonly user?: unknown }>(path, d, 'contexts', 'context');
  const wanted = context ?? optionalString(path, 'current-context', d['current-context']);
  let ctx = contexts.find((c) => c.name === wanted);
  if (wanted === undefined && contexts.length === 1) ctx = contexts[0];
  let cluster: RawCluster | undefined;
  let user: RawUser = {};
  if (ctx === undefined) {
    if (wanted !== undefined) throw invalid(path, `context ${quoteValue(wanted)} not found`);
    // No context at all: a file with one cluster (and at most one user) is still usable.
    if (clusters.length !== 1 || users.length > 1) throw invalid(path, 'has no current-context; set current-context');
    cluster = clusters[0];
    user = users[0] ?? {};
  } else {
    const clusterName = optionalString(path, `context ${ctx.name}: cluster`, ctx.cluster);
    cluster = clusters.find((c) => c.name === clusterName);
    if (cluster === undefined) throw invalid(path, `cluster ${quoteValue(clusterName ?? '')} of context ${quoteValue(ctx.name)} not found`);
    const userName = optionalString(path, `context ${ctx.name}: user`, ctx.user);
    if (userName !== undefined) {
      const found = users.find((u) => u.name === userName);
      if (found === undefined) throw invalid(path, `user ${quoteValue(userName)} of context ${quoteValue(ctx.name)} not found`);
      user = found;
    }
  }
  const server = optionalString(path, 'cluster.server', cluster?.server);
  if (server === undefined) throw invalid(path, 'the cluster has no server');
  let url: URL;
  try {
    url = new URL(server);
  } catch (err) {
    throw invalid(path, `server ${quoteValue(server)} is not a URL`, err);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid(path, `server ${server} must be an https:// (or http://) URL`);
  const insecure = cluster?.['insecure-skip-tls-verify'];
  if (insecure !== undefined && typeof insecure !== 'boolean') throw invalid(path, 'insecure-skip-tls-verify must be true or false');
  const ca = await pem(path, 'certificate-authority', cluster?.['certificate-authority-data'], cluster?.['certificate-authority']);
  const clientCert = await pem(path, 'client-certificate', user['client-certificate-data'], user['client-certificate']);
  const clientKey = await pem(path, 'client-key', user['client-key-data'], user['client-key']);
  if ((clientCert === undefined) !== (clientKey === undefined)) throw invalid(path, 'a client certificate needs its key (client-key) and the other way round');
  const tokenFile = optionalString(path, 'user.tokenFile', user.tokenFile);
  const tlsServerName = optionalString(path, 'cluster.tls-server-name', cluster?.['tls-server-name']);
  const token = optionalString(path, 'user.token', user.token);
  const username = optionalString(path, 'user.username', user.username);
  const password = optionalString(path, 'user.password', user.password);
  return {
    server: server.replace(/\/+$/, ''),
    insecureSkipTLSVerify: insecure === true,
    ...(ca === undefined ? {} : { ca }),
    ...(tlsServerName === undefined ? {} : { tlsServerName }),
    ...(clientCert === undefined || clientKey === undefined ? {} : { clientCert, clientKey }),
    ...(token === undefined ? {} : { token }),
    ...(tokenFile === undefined ? {} : { tokenFile: isAbsolute(tokenFile) ? tokenFile : resolve(dirname(path), tokenFile) }),
    ...(username === undefined ? {} : { username }),
    ...(password === undefined ? {} : { password }),
  };
}

/** Reads and resolves the connection file at `path` (YAML or JSON). */
export async function loadOrchconfig(path: string, context?: string): Promise<OrchConnection> {
  const full = resolve(path);
  let text: string;
  try {
    text = await readFile(full, 'utf8');
  } catch (err) {
    throw invalid(full, `cannot read it: ${messageOf(err)}`, err);
  }
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw invalid(full, `malformed YAML or JSON: ${messageOf(err)}`, err);
  }
  return resolveOrchconfig(doc, full, context);
}
