/**
 * The URL of an HTTP request target, for both servers. A target in origin form ("/path?q") is
 * read against a fixed origin by appending it, never resolved as a relative reference: "//x"
 * resolved against a base is a network-path reference (host "x"), and "//", "//:" or
 * "//:99999/pods" are not URLs at all, which made the URL constructor throw and each server
 * answer a 5xx. Appended, every one of them is a path ("//:99999/pods") that routes to a 404.
 */

const ORIGIN = 'http://request.invalid';

/** The target as a URL (its pathname is the target's path), or undefined when it is not in origin form. */
export function parseRequestTarget(raw: string): URL | undefined {
  if (!raw.startsWith('/')) return undefined;
  try {
    return new URL(`${ORIGIN}${raw}`);
  } catch {
    // Not reached for a target Node's HTTP parser accepted; the caller answers 400 all the same.
    return undefined;
  }
}
