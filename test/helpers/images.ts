/**
 * Extra images for tests that need several distinct ones (image garbage collection): each is
 * the locally built busybox (its layer shared) plus a layer of its own holding `randomMiB` MiB
 * of random bytes, uncompressed (so the size the runtime reports and the space it takes are
 * known), imported into a test containerd's k8s.io namespace with ctr as
 * `docker.io/library/<name>:1`.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { IMAGE_CACHE_DIR, localImages, requireBinaries } from './containerd.js';

const execFileAsync = promisify(execFile);

interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
}

const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

async function readJson<T>(file: string): Promise<T> {
  return JSON.parse(await readFile(file, 'utf8')) as T;
}

/** Writes `data` as a blob of the layout; returns its descriptor. */
async function putBlob(layout: string, mediaType: string, data: Buffer): Promise<Descriptor> {
  const digest = sha256(data);
  await writeFile(path.join(layout, 'blobs', 'sha256', digest), data);
  return { mediaType, digest: `sha256:${digest}`, size: data.length };
}

/** A tar holding data/random with `mib` MiB of random bytes; returns the tar's path. */
async function randomLayer(work: string, name: string, mib: number): Promise<string> {
  const root = path.join(work, `${name}-root`);
  await mkdir(path.join(root, 'data'), { recursive: true });
  const fh = await open(path.join(root, 'data', 'random'), 'w');
  try {
    for (let i = 0; i < mib; i++) await fh.write(randomBytes(1024 * 1024));
  } finally {
    await fh.close();
  }
  const tar = path.join(work, `${name}.tar`);
  await execFileAsync('tar', ['--sort=name', '--mtime=@0', '--owner=0', '--group=0', '--numeric-owner', '-C', root, '-cf', tar, 'data']);
  return tar;
}

/** Builds the images and imports them into the containerd at `socketPath`; resolves to their references by name. */
export async function importTestImages(socketPath: string, images: readonly { readonly name: string; readonly randomMiB: number }[]): Promise<Map<string, string>> {
  await requireBinaries('importTestImages', ['ctr', 'tar']);
  await localImages();
  const busybox = path.join(IMAGE_CACHE_DIR, 'busybox');
  const bbIndex = await readJson<{ manifests: (Descriptor & { platform: unknown })[] }>(path.join(busybox, 'index.json'));
  const bbManifestDesc = bbIndex.manifests[0];
  if (bbManifestDesc === undefined) throw new Error(`${busybox}/index.json lists no image`);
  const blob = (d: Descriptor): string => path.join(busybox, 'blobs', 'sha256', d.digest.replace(/^sha256:/, ''));
  const bbManifest = await readJson<{ config: Descriptor; layers: Descriptor[] }>(blob(bbManifestDesc));
  const bbConfig = await readJson<{ rootfs: { diff_ids: string[] }; history?: unknown[] } & Record<string, unknown>>(blob(bbManifest.config));
  const work = await mkdtemp(path.join(tmpdir(), 'nodeagent-test-images-'));
  try {
    const layout = path.join(work, 'layout');
    await mkdir(path.join(layout, 'blobs', 'sha256'), { recursive: true });
    for (const layer of bbManifest.layers) await copyFile(blob(layer), path.join(layout, 'blobs', 'sha256', layer.digest.replace(/^sha256:/, '')));
    const refs = new Map<string, string>();
    const entries: unknown[] = [];
    for (const { name, randomMiB } of images) {
      const layer = await putBlob(layout, 'application/vnd.oci.image.layer.v1.tar', await readFile(await randomLayer(work, name, randomMiB)));
      const config = await putBlob(layout, 'application/vnd.oci.image.config.v1+json', Buffer.from(JSON.stringify({
        ...bbConfig,
        rootfs: { type: 'layers', diff_ids: [...bbConfig.rootfs.diff_ids, layer.digest] },
        history: [...(bbConfig.history ?? []), { created: '1970-01-01T00:00:00Z', created_by: `nodeagent test image ${name}` }],
      })));
      const manifest = await putBlob(layout, 'application/vnd.oci.image.manifest.v1+json', Buffer.from(JSON.stringify({
        schemaVersion: 2, mediaType: 'application/vnd.oci.image.manifest.v1+json', config, layers: [...bbManifest.layers, layer],
      })));
      const ref = `docker.io/library/${name}:1`;
      entries.push({ ...manifest, annotations: { 'io.containerd.image.name': ref, 'org.opencontainers.image.ref.name': '1' }, platform: bbManifestDesc.platform });
      refs.set(name, ref);
    }
    await writeFile(path.join(layout, 'oci-layout'), '{"imageLayoutVersion":"1.0.0"}');
    await writeFile(path.join(layout, 'index.json'), JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json', manifests: entries }));
    const archive = path.join(work, 'images.tar');
    await execFileAsync('tar', ['-C', layout, '-cf', archive, 'oci-layout', 'index.json', 'blobs']);
    await execFileAsync('ctr', ['-a', socketPath, '-n', 'k8s.io', 'images', 'import', '--snapshotter', 'overlayfs', archive], { timeout: 120_000 });
    return refs;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
