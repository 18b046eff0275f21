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

describe('DaemonMetrics: the reference series of reconciles, force removals, actions and errors', () => {
  const typeOf = (text: string, name: string) => new RegExp(`^# TYPE ${name} (\\w+)$`, 'm').exec(text)?.[1];

  it('exports each under the reference name and type, before anything happened', async () => {
    const text = await new DaemonMetrics().registry.metrics();
    expect(typeOf(text, 'awscni_reconcile_count')).toBe('counter');
    expect(typeOf(text, 'awscni_force_removed_enis')).toBe('counter');
    expect(typeOf(text, 'awscni_force_removed_ips')).toBe('counter');
    expect(typeOf(text, 'awscni_ipamd_action_inprogress')).toBe('gauge');
    expect(typeOf(text, 'awscni_aws_utils_error_count')).toBe('counter');
    expect(typeOf(text, 'awscni_pod_eni_error_count')).toBe('counter');
    // Unlabelled counters read 0 from the start.
    expect(text).toMatch(/^awscni_force_removed_enis 0$/m);
    expect(text).toMatch(/^awscni_force_removed_ips 0$/m);
  });

  it('counts pool actions in progress by the reference fn, and eni-manager failures as AWS utils errors', async () => {
    const m = new DaemonMetrics();
    m.actionStarted('create-eni');
    m.actionStarted('release');
    let text = await m.registry.metrics();
    expect(text).toContain('awscni_ipamd_action_inprogress{fn="increaseDatastorePool"} 1');
    expect(text).toContain('awscni_ipamd_action_inprogress{fn="decreaseDatastorePool"} 1');
    m.actionEnded('create-eni');
    m.actionFailed('create-eni', 'InsufficientFreeAddressesInSubnet');
    // Not an eni-manager code: an ipamd error only.
    m.actionFailed('assign', 'Internal');
    m.actionEnded('release');
    text = await m.registry.metrics();
    expect(text).toContain('awscni_ipamd_action_inprogress{fn="increaseDatastorePool"} 0');
    expect(text).toContain('awscni_ipamd_action_inprogress{fn="decreaseDatastorePool"} 0');
    expect(text).toContain(
      'awscni_aws_utils_error_count{fn="increaseDatastorePool",error="InsufficientFreeAddressesInSubnet"} 1',
    );
    expect(text).not.toContain('error="Internal"');
    expect(text).toContain('awscni_ipamd_error_count{fn="assign"} 1');
  });

  it('a reconcile is in progress while it runs, and its failure is counted', async () => {
    const m = new DaemonMetrics();
    let during = '';
    await m.during('nodeIPPoolReconcile', async () => {
      during = await m.registry.metrics();
    });
    expect(during).toContain('awscni_ipamd_action_inprogress{fn="nodeIPPoolReconcile"} 1');
    await expect(
      m.during('nodeIPPoolReconcile', () => Promise.reject(new Error('IMDS down'))),
    ).rejects.toThrow('IMDS down');
    m.reconcileFailed('ImdsUnavailable');
    const text = await m.registry.metrics();
    expect(text).toContain('awscni_ipamd_action_inprogress{fn="nodeIPPoolReconcile"} 0');
    expect(text).toContain('awscni_ipamd_error_count{fn="nodeIPPoolReconcile"} 1');
    expect(text).toContain(
      'awscni_aws_utils_error_count{fn="nodeIPPoolReconcile",error="ImdsUnavailable"} 1',
    );
  });
});
