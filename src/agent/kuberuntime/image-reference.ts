/**
 * Image references as the agent checks them before asking the runtime: the grammar of the
 * distribution reference (`[domain[:port]/]path[:tag][@digest]`, lowercase repository,
 * at most 255 characters of name), and upstream's applyDefaultImageTag: an untagged,
 * undigested reference gets `:latest`, without qualifying short names (the runtime does that).
 */
import { OrchError } from '../../api/errors.js';
import { quoteValue } from '../../api/quote.js';

/** The image reference is not valid (reported as InvalidImageName). */
export const KUBERUNTIME_INVALID_IMAGE = 'KUBERUNTIME_INVALID_IMAGE';
export const DEFAULT_IMAGE_TAG = 'latest';
const NAME_MAX_LENGTH = 255;

const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = new RegExp(`^(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[0-9a-fA-F:.]+\\])(?::[0-9]+)?$`);
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$/;
const IDENTIFIER = /^[a-f0-9]{64}$/;

export interface ParsedImageReference {
  readonly domain: string;
  readonly path: string;
  readonly tag: string;
  readonly digest: string;
}

function invalid(image: string, why: string): OrchError {
  return new OrchError(KUBERUNTIME_INVALID_IMAGE, 'invalid', `couldn't parse image name ${quoteValue(image)}: ${why}`, { subject: 'image' });
}

/** Parses a reference; throws KUBERUNTIME_INVALID_IMAGE (category invalid) when it is not one. */
export function parseImageReference(image: string): ParsedImageReference {
  if (image === '') throw invalid(image, 'invalid reference format: the name is empty');
  const at = image.indexOf('@');
  const digest = at < 0 ? '' : image.slice(at + 1);
  let rest = at < 0 ? image : image.slice(0, at);
  if (digest !== '' && !DIGEST.test(digest)) throw invalid(image, 'invalid digest format');
  let tag = '';
  const lastSlash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  if (colon > lastSlash) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) throw invalid(image, 'invalid reference format: bad tag');
  }
  if (rest.length > NAME_MAX_LENGTH) throw invalid(image, `repository name must not be more than ${NAME_MAX_LENGTH} characters`);
  const slash = rest.indexOf('/');
  const first = slash < 0 ? '' : rest.slice(0, slash);
  const hasDomain = slash >= 0 && (/[.:]/.test(first) || first === 'localhost' || first.toLowerCase() !== first);
  const domain = hasDomain ? first : '';
  const path = hasDomain ? rest.slice(slash + 1) : rest;
  if (hasDomain && !DOMAIN.test(domain)) throw invalid(image, 'invalid reference format: bad domain');
  if (path.toLowerCase() !== path) throw invalid(image, 'invalid reference format: repository name must be lowercase');
  if (!hasDomain && IDENTIFIER.test(path)) throw invalid(image, 'invalid repository name, cannot specify 64-byte hexadecimal strings');
  if (path === '' || !path.split('/').every((c) => PATH_COMPONENT.test(c))) throw invalid(image, 'invalid reference format');
  return { domain, path, tag, digest };
}

/** The reference with `:latest` added when it has neither tag nor digest. Throws like parseImageReference. */
export function applyDefaultImageTag(image: string): string {
  const ref = parseImageReference(image);
  return ref.tag === '' && ref.digest === '' ? `${image}:${DEFAULT_IMAGE_TAG}` : image;
}

/**
 * The repository an image is pulled from, with its registry and without tag or digest, as
 * upstream's ParseImageName gives it (`busybox:1.35` is `docker.io/library/busybox`): what
 * credentials are looked up for. Throws like parseImageReference.
 */
export function repositoryToPull(image: string): string {
  const ref = parseImageReference(image);
  const domain = ref.domain === '' ? 'docker.io' : ref.domain;
  const path = domain === 'docker.io' && !ref.path.includes('/') ? `library/${ref.path}` : ref.path;
  return `${domain}/${path}`;
}

/** Always for `:latest` or an untagged, undigested image, else IfNotPresent (the API's default). */
export function defaultPullPolicy(image: string): 'Always' | 'IfNotPresent' {
  try {
    const ref = parseImageReference(image);
    return ref.tag === DEFAULT_IMAGE_TAG || (ref.tag === '' && ref.digest === '') ? 'Always' : 'IfNotPresent';
  } catch {
    return 'IfNotPresent'; // an invalid name fails as InvalidImageName before the policy matters
  }
}
