import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  createFileCheckpointer,
  createGroupCommitFileCheckpointer,
  Datastore,
  type DatastoreError,
  type GroupCommitFileCheckpointerOptions,
  isDatastoreError,
  parseCheckpoint,
} from '@vpc-cni-kit/datastore';
import {
  InMemoryCheckpointer,
  InMemoryGroupCommitCheckpointer,
  ManualClock,
} from '@vpc-cni-kit/datastore/testing';
import { scratchDir } from '@vpc-cni-kit/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { eni, pod } from './helpers.js';

/** A datastore on one primary ENI with `n` /32s from 10.0.1.10. */
function node(
  checkpointer: ConstructorParameters<typeof Datastore>[0]['checkpointer'],
  n = 60,
  cooldownMs = 0,
) {
  const clock = new ManualClock();
  const ds = new Datastore({ clock, checkpointer, cooldownMs });
  const id = eni(ds, 0);
  for (let i = 0; i < n; i++) ds.addCidr(id, `10.0.1.${10 + i}/32`);
  return { ds, clock };
}

async function rejection(p: Promise<unknown>): Promise<DatastoreError> {
  try {
    await p;
  } catch (e) {
    if (isDatastoreError(e)) return e;
    throw e;
  }
  throw new Error('expected a rejection');
}

function storedPods(text: string | undefined): string[] {
  if (text === undefined) return [];
  return parseCheckpoint(text)
    .allocations.map((a) => `${a.containerID}=${a.ipv4}`)
    .sort();
}

function memoryPods(ds: Datastore): string[] {
  return ds
    .assignments()
    .map((a) => `${a.key.containerID}=${a.address}`)
    .sort();
}

describe('group commit (in-memory checkpointer)', () => {
  it('coalesces changes made while a write is in flight into one write, and all become durable', async () => {
    const cp = new InMemoryGroupCommitCheckpointer();
    const { ds } = node(cp);
    cp.hold();
    const changes = Array.from({ length: 20 }, (_, i) => ds.assignPending(pod(i)));
    // The first change started a write at once; the other 19 wait for the next one.
    expect(cp.stats()).toEqual({ commits: 20, writes: 1, failedWrites: 0 });
    cp.release();
    const results = await Promise.all(changes.map((c) => c.durable));
    expect(cp.stats()).toEqual({ commits: 20, writes: 2, failedWrites: 0 });
    expect(new Set(results.map((r) => r.address)).size).toBe(20);
    expect(storedPods(cp.text)).toEqual(memoryPods(ds));
    expect(cp.history).toHaveLength(2);
    expect(parseCheckpoint(cp.history[0]!).allocations).toHaveLength(1);
  });

  it('resolves durable only after the write holding the change, with the change as its value', async () => {
    const cp = new InMemoryGroupCommitCheckpointer();
    const { ds } = node(cp);
    cp.hold();
    const c = ds.assignPending(pod(1), { namespace: 'default', name: 'web' });
    let done = false;
    void c.durable.then(() => {
      done = true;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(done).toBe(false);
    expect(cp.text).toBeUndefined();
    expect(ds.findByPod(pod(1))?.address).toBe(c.result.address);
    cp.release();
    expect(await c.durable).toEqual(c.result);
    expect(storedPods(cp.text)).toEqual([`c-1=${c.result.address}`]);
  });

  it('a failed write rejects exactly its changes with CheckpointWriteFailed and undoes them, newest first', async () => {
    const cp = new InMemoryGroupCommitCheckpointer();
    const { ds } = node(cp);
    const first = ds.assignPending(pod(1));
    await first.durable;
    cp.hold();
    const inFlight = ds.assignPending(pod(2)); // write A
    const a3 = ds.assignPending(pod(3)); // write B from here on
    const d1 = ds.unassignPending(pod(1));
    const a1again = ds.assignPending(pod(1));
    const d3 = ds.unassignPending(pod(3));
    cp.failWrites(2);
    cp.release();
    const errors = await Promise.all([inFlight, a3, d1, a1again, d3].map((c) => rejection(c.durable)));
    expect(errors.map((e) => e.code)).toEqual(Array(5).fill('CheckpointWriteFailed'));
    // Two failed writes; after each, the datastore requests one more write so the file catches up.
    expect(cp.stats()).toMatchObject({ failedWrites: 2 });
    // Memory is back to what the disk holds: pod 1 on its first address, nothing else.
    expect(memoryPods(ds)).toEqual([`c-1=${first.result.address}`]);
    expect(storedPods(cp.text)).toEqual(memoryPods(ds));
    // The undone addresses are free again; a later write succeeds and includes only live assignments.
    const next = ds.assignPending(pod(4));
    expect([inFlight, a3, a1again].map((c) => c.result.address)).toContain(next.result.address);
    await next.durable;
    expect(storedPods(cp.text)).toEqual(memoryPods(ds));
  });

  it('keeps a released address out of reuse until the release is durable, and restores it on failure', async () => {
    const cp = new InMemoryGroupCommitCheckpointer();
    const { ds, clock } = node(cp, 1, 0);
    const a = ds.assignPending(pod(1));
    await a.durable;
    cp.hold();
    const d = ds.unassignPending(pod(1));
    expect(d.result.address).toBe(a.result.address);
    clock.advance(60_000);
    expect(() => ds.assignPending(pod(2))).toThrowError(
      expect.objectContaining({ code: 'NoAvailableAddress' }),
    );
    cp.failWrites(1);
    cp.release();
    expect((await rejection(d.durable)).code).toBe('CheckpointWriteFailed');
    // Equivalent to the synchronous path: the pod holds its address again.
    expect(ds.findByPod(pod(1))?.address).toBe(a.result.address);
    const again = ds.unassignPending(pod(1));
    await again.durable;
    clock.advance(1);
    const b = ds.assignPending(pod(2));
    expect(b.result.address).toBe(a.result.address);
    await b.durable;
    expect(ds.stats()).toMatchObject({ assignedIPs: 1, cooldownIPs: 0 });
  });

  it('fails the changes queued behind a failed write too, so memory returns exactly to the last durable state', async () => {
    const cp = new InMemoryGroupCommitCheckpointer();
    const { ds } = node(cp, 4, 0);
    const a = ds.assignPending(pod(1));
    await a.durable;
    const durableState = memoryPods(ds);
    cp.hold();
    const d = ds.unassignPending(pod(1)); // write A (will fail)
    const re = ds.assignPending(pod(1)); // queued behind A: a new address, the old one is pending release
    const other = ds.assignPending(pod(2)); // queued behind A
    expect(re.result.address).not.toBe(a.result.address);
    cp.failWrites(1);
    cp.release();
    for (const c of [d, re, other]) expect((await rejection(c.durable)).code).toBe('CheckpointWriteFailed');
    // Undone newest first: pod 2 and the re-ADD go, then the release: pod 1 holds its first address again.
    expect(memoryPods(ds)).toEqual(durableState);
    await cp.idle();
    expect(storedPods(cp.text)).toEqual(durableState);
  });

  it('flush() waits for forced removals and restores, which are not undone', async () => {
    const cp = new InMemoryGroupCommitCheckpointer();
    const { ds } = node(cp, 3);
    await Promise.all([ds.assignPending(pod(1)).durable, ds.assignPending(pod(2)).durable]);
    const removal = ds.removeCidr('eni-0', '10.0.1.10/32', { force: true });
    expect(removal.dropped.map((d) => d.key.containerID)).toEqual(['c-1']);
    expect(removal.checkpointError).toBeUndefined();
    await ds.flush();
    expect(storedPods(cp.text)).toEqual(['c-2=10.0.1.11']);
    cp.failWrites(1);
    expect((await rejection(ds.flush())).code).toBe('CheckpointWriteFailed');
    expect(memoryPods(ds)).toEqual(['c-2=10.0.1.11']);
  });

  it('refuses the synchronous assign/unassign with a group-commit checkpointer; the pending forms work with both', async () => {
    const { ds } = node(new InMemoryGroupCommitCheckpointer());
    expect(() => ds.assign(pod(1))).toThrowError(expect.objectContaining({ code: 'InvalidArgument' }));
    expect(() => ds.unassign(pod(1))).toThrowError(expect.objectContaining({ code: 'InvalidArgument' }));
    expect(ds.assignments()).toEqual([]);

    const sync = new InMemoryCheckpointer();
    const s = node(sync).ds;
    const c = s.assignPending(pod(1));
    expect(sync.writes).toBe(1);
    expect(await c.durable).toEqual(c.result);
    sync.failWrites(1);
    expect(() => s.unassignPending(pod(1))).toThrowError(
      expect.objectContaining({ code: 'CheckpointWriteFailed' }),
    );
    expect(s.findByPod(pod(1))?.address).toBe(c.result.address);
  });
});

describe.each([false, true])('group-commit file checkpointer (inline: %s)', (inline) => {
  const checkpointer = (path: string, options: GroupCommitFileCheckpointerOptions = {}) => {
    const cp = createGroupCommitFileCheckpointer(path, { inline, ...options });
    expect(cp.inline).toBe(inline);
    return cp;
  };
  const dirs: { path: string; remove: () => void }[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) d.remove();
  });
  function dir() {
    const d = scratchDir('vck-dsgc-');
    dirs.push(d);
    return d.path;
  }

  it('makes 50 concurrent assigns durable in far fewer writes, mode 0600, no temp files', async () => {
    const path = join(dir(), 'ipam.json');
    const cp = checkpointer(path);
    const { ds } = node(cp);
    const changes = Array.from({ length: 50 }, (_, i) =>
      ds.assignPending(pod(i), { namespace: 'ns', name: `p${i}` }),
    );
    await Promise.all(changes.map((c) => c.durable));
    const { commits, writes, failedWrites } = cp.stats();
    expect(commits).toBe(50);
    expect(failedWrites).toBe(0);
    expect(writes).toBeLessThan(10);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(storedPods(readFileSync(path, 'utf8'))).toEqual(memoryPods(ds));
    expect(readdirSync(dirname(path))).toEqual(['ipam.json']);
    // A restart (the synchronous adapter on the same file) restores exactly what was acknowledged.
    const restarted = node(createFileCheckpointer(path)).ds;
    expect(restarted.restore().restored).toBe(50);
    expect(memoryPods(restarted)).toEqual(memoryPods(ds));
  });

  it('reports a vanished directory as CheckpointWriteFailed to every waiter and undoes their changes', async () => {
    const base = dir();
    const sub = join(base, 'state');
    mkdirSync(sub);
    const path = join(sub, 'ipam.json');
    const cp = checkpointer(path);
    const { ds } = node(cp);
    await ds.assignPending(pod(1)).durable;
    rmSync(sub, { recursive: true });
    const failing = [ds.assignPending(pod(2)), ds.assignPending(pod(3)), ds.unassignPending(pod(1))];
    const errors = await Promise.all(failing.map((c) => rejection(c.durable)));
    for (const e of errors) {
      expect(e.code).toBe('CheckpointWriteFailed');
      expect((e.details.cause as NodeJS.ErrnoException).code).toBe('ENOENT');
    }
    expect(memoryPods(ds)).toEqual(['c-1=10.0.1.10']);
    mkdirSync(sub);
    await ds.assignPending(pod(4)).durable;
    expect(storedPods(readFileSync(path, 'utf8'))).toEqual(memoryPods(ds));
    expect(readdirSync(sub)).toEqual(['ipam.json']);
  });

  it("durability 'process-crash' writes the same atomic file without flushing; bad values are refused", async () => {
    const path = join(dir(), 'ipam.json');
    const cp = checkpointer(path, { durability: 'process-crash' });
    const { ds } = node(cp);
    await Promise.all([1, 2, 3].map((i) => ds.assignPending(pod(i)).durable));
    expect(storedPods(readFileSync(path, 'utf8'))).toEqual(memoryPods(ds));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(dirname(path))).toEqual(['ipam.json']);
    expect(() => checkpointer(path, { durability: 'sometimes' as 'power-loss' })).toThrowError(
      expect.objectContaining({ code: 'InvalidArgument' }),
    );
  });

  it('fails cleanly when the path is under a regular file (ENOTDIR), changing nothing', async () => {
    const base = dir();
    writeFileSync(join(base, 'file'), 'x');
    const { ds } = node(checkpointer(join(base, 'file', 'ipam.json')));
    const c = ds.assignPending(pod(1));
    const e = await rejection(c.durable);
    expect(e.code).toBe('CheckpointWriteFailed');
    expect(ds.assignments()).toEqual([]);
    expect(readdirSync(base)).toEqual(['file']);
  });

  it('under churn, the file always parses, matches an acknowledged state, and no temp file is left', async () => {
    const path = join(dir(), 'ipam.json');
    const cp = checkpointer(path);
    const { ds, clock } = node(cp, 40);
    let reads = 0;
    let stop = false;
    const reader = (async () => {
      while (!stop) {
        const text = (() => {
          try {
            return readFileSync(path, 'utf8');
          } catch {
            return undefined;
          }
        })();
        if (text !== undefined) {
          parseCheckpoint(text); // throws if ever half-written
          reads += 1;
        }
        await new Promise((r) => setImmediate(r));
      }
    })();
    const live = new Set<number>();
    for (let round = 0; round < 15; round++) {
      const batch = [];
      for (let i = 0; i < 8; i++) {
        const n = round * 8 + i;
        batch.push(ds.assignPending(pod(n)).durable);
        live.add(n);
      }
      clock.advance(1);
      for (const n of [...live].slice(0, live.size - 6)) {
        batch.push(ds.unassignPending(pod(n)).durable);
        live.delete(n);
      }
      await Promise.all(batch);
      expect(storedPods(readFileSync(path, 'utf8'))).toEqual(memoryPods(ds));
      // Let the reader in between rounds (inline writes complete without a turn of the event loop).
      await new Promise((r) => setImmediate(r));
    }
    stop = true;
    await reader;
    await cp.idle();
    expect(reads).toBeGreaterThan(0);
    expect(cp.stats().writes).toBeLessThan(cp.stats().commits);
    expect(readdirSync(dirname(path))).toEqual(['ipam.json']);
  });
});

describe('group-commit file checkpointer: where it writes from', () => {
  /** The file-system type of the mount holding `path`, from /proc/mounts (longest mount-point prefix). */
  function fsTypeOf(path: string): string | undefined {
    let best: { at: string; type: string } | undefined;
    for (const line of readFileSync('/proc/mounts', 'utf8').split('\n')) {
      const [, at, type] = line.split(' ');
      if (at === undefined || type === undefined) continue;
      const prefix = at === '/' ? '/' : `${at}/`;
      if ((path === at || path.startsWith(prefix)) && (best === undefined || at.length >= best.at.length)) {
        best = { at, type };
      }
    }
    return best?.type;
  }

  it('writes in the call on tmpfs/ramfs and on the thread pool elsewhere, unless told', async () => {
    const here = process.cwd();
    const memory = ['tmpfs', 'ramfs'];
    expect(createGroupCommitFileCheckpointer(join(here, 'ipam.json')).inline).toBe(
      memory.includes(fsTypeOf(here) ?? ''),
    );
    expect(createGroupCommitFileCheckpointer(join(here, 'ipam.json'), { inline: true }).inline).toBe(true);
    // A directory that does not exist cannot be told: the thread pool (the write will fail with ENOENT).
    expect(createGroupCommitFileCheckpointer('/nonexistent/vck/ipam.json').inline).toBe(false);
    if (fsTypeOf('/dev/shm') !== 'tmpfs') return;
    const shm = mkdtempSync('/dev/shm/vck-dsgc-');
    try {
      const cp = createGroupCommitFileCheckpointer(join(shm, 'ipam.json'));
      expect(cp.inline).toBe(true);
      expect(createGroupCommitFileCheckpointer(join(shm, 'ipam.json'), { inline: false }).inline).toBe(false);
      const { ds } = node(cp);
      const change = ds.assignPending(pod(1), { namespace: 'ns', name: 'p1' });
      // Written in the call: on the file before durable is even awaited.
      expect(storedPods(readFileSync(join(shm, 'ipam.json'), 'utf8'))).toEqual(['c-1=10.0.1.10']);
      await change.durable;
      expect(cp.stats()).toMatchObject({ commits: 1, writes: 1, failedWrites: 0 });
    } finally {
      rmSync(shm, { recursive: true, force: true });
    }
  });
});

function dirname(p: string): string {
  return p.slice(0, p.lastIndexOf('/'));
}
