/**
 * /configz: the effective configuration as upstream's configz shows it, under the key
 * `nodeagentconfig`; the object is the one `nodeagent config print -o json` prints (kind and
 * apiVersion included, durations as Go durations). /debug/flags/v: PUT a number to change the
 * log verbosity at run time (enableDebugFlagsHandler); other methods answer 406, as upstream.
 */
import { toWireObject, type NodeagentConfiguration } from '../../config/index.js';
import { HttpError, readBody, sendJson, sendText } from '../http.js';
import type { Route } from '../router.js';
import { quoteValue } from '../../../api/quote.js';

export function configzRoutes(config: NodeagentConfiguration): Route[] {
  const body = JSON.stringify({ nodeagentconfig: toWireObject(config) });
  return [{ pattern: '/configz', bucket: 'configz', handle: ({ res }) => { sendJson(res, 200, body); } }];
}

export interface VerbositySetter {
  setVerbosity(level: number): void;
}

export function debugFlagsRoutes(logs: VerbositySetter): Route[] {
  return [{
    pattern: '/debug/flags/v',
    bucket: 'debug',
    async handle({ req, res }) {
      if (req.method !== 'PUT') throw new HttpError(406, 'unsupported http method');
      const text = (await readBody(req, 64)).toString('utf8').trim();
      if (!/^\d+$/.test(text) || Number(text) > 2 ** 31 - 1) {
        throw new HttpError(400, `failed set logging.verbosity ${text}: ${quoteValue(text)} is not a non-negative integer`);
      }
      logs.setVerbosity(Number(text));
      sendText(res, 200, `successfully set logging.verbosity to ${Number(text)}`);
    },
  }];
}
