/**
 * The garbage collectors' metrics, registered in the agent's /metrics registry under upstream's
 * names with the `nodeagent_` prefix: nodeagent_image_garbage_collected_total{reason} (upstream's
 * kubelet_image_garbage_collected_total; reason "space"), and the ones upstream lacks:
 * nodeagent_container_garbage_collected_total{object} (container, sandbox, log_directory) and
 * the durations of the passes, nodeagent_container_gc_duration_seconds and
 * nodeagent_image_gc_duration_seconds.
 */
import { Counter, Histogram, type Registry } from 'prom-client';

/** What the container GC removes. */
export type GcObject = 'container' | 'sandbox' | 'log_directory';

export interface GcMetrics {
  observeContainerPass(seconds: number): void;
  observeImagePass(seconds: number): void;
  /** One object the container GC removed. */
  containerRemoved(object: GcObject): void;
  /** One image removed to free space. */
  imageRemoved(): void;
}

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export function createGcMetrics(registry: Registry): GcMetrics {
  const registers = [registry];
  const containerPass = new Histogram({ name: 'nodeagent_container_gc_duration_seconds', help: 'Duration in seconds of container garbage collection passes', buckets: BUCKETS, registers });
  const imagePass = new Histogram({ name: 'nodeagent_image_gc_duration_seconds', help: 'Duration in seconds of image garbage collection passes', buckets: BUCKETS, registers });
  const containers = new Counter({
    name: 'nodeagent_container_garbage_collected_total', help: 'Dead containers, sandboxes and pod log directories removed by container garbage collection',
    labelNames: ['object'], registers,
  });
  const images = new Counter({ name: 'nodeagent_image_garbage_collected_total', help: 'Images removed by image garbage collection', labelNames: ['reason'], registers });
  return {
    observeContainerPass: (s) => { containerPass.observe(s); },
    observeImagePass: (s) => { imagePass.observe(s); },
    containerRemoved: (object) => { containers.inc({ object }); },
    imageRemoved: () => { images.inc({ reason: 'space' }); },
  };
}
