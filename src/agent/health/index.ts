/**
 * health: the agent's health checks (upstream: the healthz checks and the runtime state's
 * health checks). The loops register a check once they exist; the servers answer /healthz from
 * them and the node status turns the first failing one into a not-ready node.
 *
 * Owns: the list of checks and their order. Must not: run anything itself (every check is a
 * cheap read of its module's own state) or decide what healthy means for a module.
 */

export interface HealthCheck {
  readonly name: string;
  /** undefined when healthy, else the reason. Must be cheap and never throw. */
  check(): string | undefined;
}

export class HealthChecks {
  private readonly checks: HealthCheck[];

  constructor(initial: readonly HealthCheck[] = []) {
    this.checks = [...initial];
  }

  /** Adds a check after the existing ones. */
  add(check: HealthCheck): void {
    this.checks.push(check);
  }

  /** Every check, in the order added (the servers' /healthz lists them so). */
  all(): readonly HealthCheck[] {
    return this.checks;
  }

  /** The reason of the first failing check, or undefined when every check passes. */
  firstProblem(): string | undefined {
    for (const c of this.checks) {
      const problem = c.check();
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
}
