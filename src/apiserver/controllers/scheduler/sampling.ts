/**
 * How many feasible nodes one scheduling cycle looks for before it stops filtering: upstream's
 * numFeasibleNodesToFind with percentageOfNodesToScore at its default (0, the adaptive
 * percentage). Clusters under 100 nodes are filtered whole; above that, 50 % of the nodes minus
 * one point per 125 nodes, at least 5 %, and never fewer than 100. The cycle starts filtering where
 * the previous one stopped (the scheduler keeps that index), so every node takes its turn. At
 * 3,000 nodes a pod is checked against 780 of them instead of all.
 */
export const MIN_FEASIBLE_NODES_TO_FIND = 100;
export const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5;

export function feasibleNodesToFind(allNodes: number): number {
  if (allNodes < MIN_FEASIBLE_NODES_TO_FIND) return allNodes;
  const percentage = Math.max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND, 50 - Math.trunc(allNodes / 125));
  return Math.max(MIN_FEASIBLE_NODES_TO_FIND, Math.trunc((allNodes * percentage) / 100));
}
