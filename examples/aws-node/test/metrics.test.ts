/**
 * The daemon's Prometheus exposition: the reference's start-up, node-initialization and connmark series,
 * and the process metrics, as a scrape sees them.
 */
import { describe, expect, it } from 'vitest';
import { DaemonMetrics } from '../src/daemon/metrics.js';

describe('DaemonMetrics', () => {
  it('exposes start-up and node-init durations, the connmark backend and reconciles, and process metrics', async () => {
    const m = new DaemonMetrics();
    // Before anything happened: both reconcile results exist at 0 (the reference pre-initializes them).
    let text = await m.registry.metrics();
    expect(text).toContain('awscni_connmark_reconcile_total{result="success"} 0');
    expect(text).toContain('awscni_connmark_reconcile_total{result="error"} 0');

    m.nodeInitialized(0.3);
    m.started(0.45);
    m.setConnmarkBackend('nftables');
    m.setConnmarkBackend('iptables');
    m.connmarkReconciled('success');
    text = await m.registry.metrics();
    expect(text).toContain('awscni_ipamd_node_initialization_duration_seconds_count{success="true"} 1');
    expect(text).toContain('awscni_ipamd_node_initialization_duration_seconds_sum{success="true"} 0.3');
    expect(text).toContain(
      'awscni_ipamd_startup_duration_seconds_bucket{le="0.5",success="true",with_api_server="false",failure_reason=""} 1',
    );
    // Only the backend in use reads 1.
    expect(text).toContain('awscni_connmark_backend{backend="iptables"} 1');
    expect(text).not.toContain('backend="nftables"');
    expect(text).toContain('awscni_connmark_reconcile_total{result="success"} 1');
    // Process metrics: resident memory, event-loop lag, GC.
    for (const name of [
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_gc_duration_seconds',
    ])
      expect(text).toMatch(new RegExp(`^# TYPE ${name} `, 'm'));
  });
});
