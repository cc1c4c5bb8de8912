/**
 * The console's entry: the sign-in page until a token is accepted, then the shell and the view
 * of the route in the hash. The token is kept in sessionStorage (this tab only, gone when it
 * closes) and sent as a bearer token with every read; a 401 at any time ends the session.
 */
import { createApi, type ApiError, type FetchFn } from './api.js';
import { replace } from './dom.js';
import { Hub } from './hub.js';
import type { Timers } from './reflector.js';
import { parseRoute, sectionOf } from './route.js';
import type { View, ViewContext } from './views/context.js';
import { eventsView } from './views/events.js';
import { nodeView } from './views/node.js';
import { nodesView } from './views/nodes.js';
import { podView } from './views/pod.js';
import { podsView } from './views/pods.js';
import { createShell } from './views/shell.js';
import { signInPage } from './views/sign-in.js';

const TOKEN_KEY = 'orch-console-token';
const USER_KEY = 'orch-console-user';

const root = document.getElementById('app');
const fetchFn: FetchFn = (input, init) => fetch(input, init);
const timers: Timers = {
  setTimeout: (fn, ms) => window.setTimeout(fn, ms),
  clearTimeout: (handle) => {
    window.clearTimeout(handle as number);
  },
};

let endSession: (() => void) | undefined;

function showSignIn(message: string): void {
  if (root === null) return;
  document.title = 'Sign in · orch console';
  replace(root, signInPage({
    message,
    fetch: fetchFn,
    wait: (ms) => new Promise((resolve) => {
      window.setTimeout(resolve, ms);
    }),
    onSignedIn(token, user) {
      sessionStorage.setItem(TOKEN_KEY, token);
      sessionStorage.setItem(USER_KEY, user);
      startSession(token, user);
    },
  }));
  root.querySelector('textarea')?.focus();
}

function signOut(message: string): void {
  endSession?.();
  endSession = undefined;
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(USER_KEY);
  showSignIn(message);
}

function startSession(token: string, user: string): void {
  if (root === null) return;
  const api = createApi({
    token,
    fetch: fetchFn,
    onUnauthorized: (err: ApiError) => {
      // Outside the call stack of the failing read: the session it belongs to is torn down.
      window.setTimeout(() => {
        signOut(`The API server no longer accepts your token (${err.message}). Sign in again.`);
      }, 0);
    },
  });
  const hub = new Hub({ api, timers, now: () => Date.now() });
  const ctx: ViewContext = { api, hub, timers, now: () => Date.now() };
  const shell = createShell(ctx, user, () => {
    signOut('');
  });
  replace(root, shell.element);
  hub.start();
  let view: View | undefined;
  const show = (): void => {
    view?.dispose();
    const route = parseRoute(location.hash);
    view = route.view === 'nodes' ? nodesView(ctx)
      : route.view === 'node' ? nodeView(ctx, route.name)
        : route.view === 'pods' ? podsView(ctx, route.query)
          : route.view === 'pod' ? podView(ctx, route.namespace, route.name)
            : eventsView(ctx, route.query);
    shell.select(sectionOf(route));
    replace(shell.main, view.element);
    document.title = `${view.title} · orch console`;
  };
  const onVisibility = (): void => {
    hub.visibility(document.visibilityState === 'visible');
  };
  window.addEventListener('hashchange', show);
  document.addEventListener('visibilitychange', onVisibility);
  show();
  endSession = () => {
    window.removeEventListener('hashchange', show);
    document.removeEventListener('visibilitychange', onVisibility);
    view?.dispose();
    shell.dispose();
    hub.stop();
  };
}

const saved = sessionStorage.getItem(TOKEN_KEY);
if (saved === null || saved === '') showSignIn('');
else startSession(saved, sessionStorage.getItem(USER_KEY) ?? 'signed in');
