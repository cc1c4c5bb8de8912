/**
 * The sign-in page: a bearer token (from `kubectl create token`, or the server's token file),
 * checked against the API (SelfSubjectReview, as `kubectl auth whoami`) before anything else is
 * read. A refused token shows the API's answer, never data. A check that did not reach the
 * server is tried again: a browser fails every request in flight when the machine's network
 * changes (an interface or address added), which says nothing of the token.
 */
import { ApiError, createApi, type FetchFn } from '../api.js';
import { h, replace } from '../dom.js';

interface SelfSubjectReview {
  readonly status?: { readonly userInfo?: { readonly username?: string } };
}

/** The pauses before the second and third tries of a check that did not reach the server. */
export const NETWORK_RETRY_MS: readonly number[] = [500, 1000];

/**
 * Who holds `token`: the user's name, or throws ApiError. A 403 (the user may not ask) still
 * proves the token valid. A request that did not reach the server (ApiError status 0) is tried
 * again after each pause of NETWORK_RETRY_MS; an answer of the server is final.
 */
export async function whoAmI(token: string, fetchFn: FetchFn, wait: (ms: number) => Promise<void>): Promise<string> {
  const api = createApi({ token, fetch: fetchFn });
  for (let attempt = 0; ; attempt++) {
    try {
      const review = await api.post<SelfSubjectReview>('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
        apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview',
      });
      return review.status?.userInfo?.username ?? 'unknown user';
    } catch (err) {
      if (err instanceof ApiError && err.status === 403) return 'signed in';
      const pause = NETWORK_RETRY_MS[attempt];
      if (!(err instanceof ApiError && err.status === 0) || pause === undefined) throw err;
      await wait(pause);
    }
  }
}

export interface SignInOptions {
  readonly message: string;
  readonly fetch: FetchFn;
  /** Resolves after `ms` milliseconds (the pause before a check is tried again). */
  readonly wait: (ms: number) => Promise<void>;
  readonly onSignedIn: (token: string, user: string) => void;
}

export function signInPage(options: SignInOptions): HTMLElement {
  const token = h('textarea', {
    id: 'token', name: 'token', rows: 4, autocomplete: 'off', spellcheck: 'false', required: true,
    placeholder: 'eyJhbGciOi…', 'aria-describedby': 'token-help',
  });
  const error = h('p', { class: 'error', id: 'sign-in-error', role: 'alert' });
  const submit = h('button', { type: 'submit', class: 'btn primary' }, 'Sign in');
  const show = (text: string): void => {
    replace(error, text);
    error.hidden = text === '';
  };
  show(options.message);
  const form = h('form', { class: 'sign-in-form', novalidate: true },
    h('label', { for: 'token' }, 'Bearer token'),
    token,
    h('p', { class: 'help', id: 'token-help' },
      'Kept in this tab only (session storage). Get one with ', h('code', {}, 'kubectl create token default'),
      ' or use a token of the server\'s --token-auth-file.'),
    error,
    submit);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = token.value.trim();
    if (value === '') {
      show('Paste a bearer token first.');
      return;
    }
    submit.disabled = true;
    show('');
    whoAmI(value, options.fetch, options.wait).then((user) => {
      options.onSignedIn(value, user);
    }, (err: unknown) => {
      submit.disabled = false;
      const text = err instanceof ApiError && err.status === 401
        ? 'The API server refused this token (401 Unauthorized): it is unknown, expired or revoked.'
        : `Cannot sign in: ${err instanceof Error ? err.message : String(err)}`;
      show(text);
    });
  });
  return h('div', { class: 'sign-in' },
    h('div', { class: 'sign-in-card' },
      h('div', { class: 'brand big' }, h('span', { class: 'brand-mark', 'aria-hidden': 'true' }), 'orch console'),
      h('p', { class: 'lead' }, 'A live, read-only view of this cluster. Every read goes through the API with your identity, as kubectl\'s do.'),
      form));
}
