// The pod watch, modelled: when the daemon (watching pods with fieldSelector spec.nodeName) first sees a pod bound
// to its node, relative to that pod's CNI ADD. Used by node-sim.mjs and cluster.mjs when `podWatch` is on; the
// static settings never use it. Sources and reasoning: README.md, "Model" → "Pod watch".
import { prng } from './lib.mjs';

/**
 * The bind → ADD path, ms, seeded. Every range is drawn uniformly per pod.
 *
 * - `kubeletWatch`: the kubelet's own watch delivers the binding (API server → reflector → pod config → pod
 *   worker).
 * - `syncPrep`: the pod worker's SyncPod before it waits for volumes (status, cgroups, pod directories).
 * - volumes: kubelet's `WaitForAttachAndMount` polls immediately and then every 300 ms
 *   (`podAttachAndMountRetryInterval`, pkg/kubelet/volumemanager/volume_manager.go); the populator and the
 *   reconciler each run every 100 ms, so the projected service-account token is mounted by the second poll
 *   (300 ms) with probability `secondPoll`, else by the third (600 ms). A share `noVolumes` of pods mounts
 *   nothing (automountServiceAccountToken: false and no other volume) and does not wait at all.
 * - `sandbox`: kubelet's createPodSandbox and containerd 1.6's RunPodSandbox up to the CNI ADD (the pause image is
 *   present; it creates the network namespace, then sets up the network before it starts the sandbox container).
 * - `daemonWatch`: the daemon's own watch delivers the binding (a different API server instance may serve it; it
 *   is drawn independently and longer than the kubelet's, which shortens the lead: the conservative side).
 */
export const POD_WATCH_MODEL = {
  kubeletWatch: [10, 100],
  syncPrep: [5, 50],
  noVolumes: 0.1,
  secondPoll: 0.85,
  pollMs: 300,
  sandbox: [20, 100],
  daemonWatch: [20, 250],
};

/**
 * A seeded sampler of "how long before its ADD the daemon sees this pod bound", ms; `undefined` when the daemon
 * sees it only after the ADD has begun (the pod then never counts as bound). The seed is mixed so that the EC2
 * latency model's own stream is untouched: a run without the watch is exactly the run it always was.
 */
export function podWatchLead(seed, model = POD_WATCH_MODEL) {
  const rand = prng((seed ^ 0x5bd1e995) >>> 0);
  const between = ([lo, hi]) => lo + (hi - lo) * rand();
  return () => {
    const kubelet = between(model.kubeletWatch) + between(model.syncPrep);
    const volumes =
      rand() < model.noVolumes ? 0 : rand() < model.secondPoll ? model.pollMs : 2 * model.pollMs;
    const toAdd = kubelet + volumes + between(model.sandbox);
    const seen = between(model.daemonWatch);
    return seen < toAdd ? toAdd - seen : undefined;
  };
}

/**
 * The pods the scheduler would bind: every add while fewer than `capacity` trace pods run (a pod over max pods
 * is placed on another node and never bound here). Policy-independent: pods waiting for an address count as
 * running. Returns the set of admitted pod names.
 */
export function admittedPods(events, capacity) {
  const live = new Set();
  const admitted = new Set();
  for (const e of [...events].sort((a, b) => a.time - b.time)) {
    if (e.event === 'add') {
      if (live.size >= capacity) continue;
      live.add(e.pod);
      admitted.add(e.pod);
    } else live.delete(e.pod);
  }
  return admitted;
}
