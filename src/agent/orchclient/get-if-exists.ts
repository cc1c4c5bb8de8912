/** A GET that answers undefined for an object the API server does not have (404). */
import type { RestCallOptions, RestClient } from './rest-types.js';
import { statusOf } from './status.js';

/** The object at `path`, or undefined when the server answers 404; other failures reject as the GET did. */
export async function getIfExists<T>(rest: RestClient, path: string, options?: RestCallOptions): Promise<T | undefined> {
  try {
    return await rest.get<T>(path, options);
  } catch (err) {
    if (statusOf(err)?.code === 404) return undefined;
    throw err;
  }
}
