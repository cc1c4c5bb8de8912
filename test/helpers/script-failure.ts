/**
 * The message of a script or command that failed under a time limit (execFile's error): whether
 * it timed out and was killed, was killed by a signal, or exited with a code, then the last lines
 * it printed, so that a failure far into a run (the first image build of a bench) says what
 * happened.
 */

/** Lines of a failed script's output quoted in the error. */
const OUTPUT_LINES = 20;

/** The last `count` lines of a script's output (stderr after stdout), for an error message. */
function lastLines(err: unknown, count: number): string {
  const text = (key: string): string => {
    const value: unknown = typeof err === 'object' && err !== null ? Reflect.get(err, key) : undefined;
    return typeof value === 'string' ? value.trim() : '';
  };
  const lines = [text('stdout'), text('stderr')].filter((t) => t !== '').join('\n').split('\n');
  return lines.slice(-count).join('\n');
}

/** Why a script failed: timed out (killed), the signal that killed it, or its exit code; then its last output. */
export function scriptFailure(script: string, err: unknown, timeoutMs: number): string {
  const get = (key: string): unknown => (typeof err === 'object' && err !== null ? Reflect.get(err, key) : undefined);
  const signal = get('signal');
  const code = get('code');
  const how = get('killed') === true && signal === 'SIGTERM'
    ? `timed out after ${timeoutMs / 1000} s and was killed`
    : typeof signal === 'string' ? `was killed by ${signal}`
      : typeof code === 'number' ? `exited with code ${code}` : `could not run: ${err instanceof Error ? err.message : String(err)}`;
  const output = lastLines(err, OUTPUT_LINES);
  return `${script} ${how}; ${output === '' ? 'it printed nothing' : `its last output:\n${output}`}`;
}

