import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import {
  CHECKPOINT_VERSION,
  checkpointPathForNetworkCard,
  createFileCheckpointer,
  createGroupCommitFileCheckpointer,
  Datastore,
  isDatastoreError,
  parseCheckpoint,
  parseRestorableCheckpoint,
  serializeCheckpoint,
} from '@vpc-cni-kit/datastore';
import { InMemoryCheckpointer, ManualClock } from '@vpc-cni-kit/datastore/testing';
import { fifoWithLateWriter, scratchDir } from '@vpc-cni-kit/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { eni, pod } from './helpers.js';

/** A checkpoint as the reference daemon writes it (Go field order, omitempty, nanosecond timestamps). */
const REFERENCE_FILE =
  '{"version":"vpc-cni-ipam/1","allocations":[' +
  '{"networkName":"aws-cni","containerID":"a1b2","ifName":"eth0","ipv4":"10.0.1.23","allocationTimestamp":1700000000123000000,"metadata":{"k8sPodNamespace":"default","k8sPodName":"web-1","interfacesCount":1}},' +
  '{"networkName":"aws-cni","containerID":"c3d4","ifName":"eth0","ipv4":"10.0.2.4","allocationTimestamp":1700000001000000000,"metadata":{}},' +
  '{"networkName":"aws-cni","containerID":"e5f6","ifName":"eth0","ipv4":"192.168.9.9","allocationTimestamp":1700000002000000000,"metadata":{"k8sPodNamespace":"kube-system","k8sPodName":"dns"}}' +
  ']}';

function node(
  checkpointer: InMemoryCheckpointer | ReturnType<typeof createFileCheckpointer>,
  clock = new ManualClock(),
) {
  const ds = new Datastore({ clock, checkpointer, prefixDelegation: false });
  eni(ds, 0);
  eni(ds, 1);
  ds.addCidr('eni-0', '10.0.1.23/32');
  ds.addCidr('eni-0', '10.0.1.24/32');
  ds.addCidr('eni-1', '10.0.2.0/28');
  return ds;
}

function errorCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (isDatastoreError(e)) return e.code;
    throw e;
  }
  return undefined;
}

describe('vpc-cni-ipam/1 format', () => {
  it('reads the reference file and writes it back byte for byte', () => {
    const doc = parseCheckpoint(REFERENCE_FILE);
    expect(doc.allocations).toHaveLength(3);
    expect(serializeCheckpoint(doc)).toBe(REFERENCE_FILE);
  });

  it('rejects unknown versions, malformed JSON and bad shapes with typed errors and a path', () => {
    expect(errorCode(() => parseCheckpoint('{"version":"vpc-cni-ipam/2","allocations":[]}'))).toBe(
      'CheckpointUnknownVersion',
    );
    expect(errorCode(() => parseCheckpoint('{"version":"vpc-cni-ipam/1",'))).toBe('CheckpointMalformed');
    expect(errorCode(() => parseCheckpoint('[]'))).toBe('CheckpointMalformed');
    const bad = [
      '{"allocations":{}}',
      '{"allocations":[1]}',
      '{"allocations":[{"networkName":"n","containerID":"c","ifName":"i"}]}',
      '{"allocations":[{"networkName":"n","containerID":"c","ifName":"i","ipv4":"10.0.0.300"}]}',
      '{"allocations":[{"networkName":"n","containerID":"c","ifName":"i","ipv4":"::1"}]}',
      '{"allocations":[{"networkName":"n","containerID":"c","ifName":"i","ipv4":"1.2.3.4","ipv6":"::1"}]}',
      '{"allocations":[{"networkName":"n","containerID":"","ifName":"i","ipv4":"1.2.3.4"}]}',
      '{"allocations":[{"networkName":"n","containerID":"c","ifName":"i","ipv4":"1.2.3.4","allocationTimestamp":"x"}]}',
      '{"allocations":[{"networkName":"n","containerID":"c","ifName":"i","ipv4":"1.2.3.4","metadata":{"interfacesCount":-1}}]}',
    ];
    for (const body of bad) {
      const text = `{"version":"${CHECKPOINT_VERSION}",${body.slice(1)}`;
      let caught: unknown;
      try {
        parseCheckpoint(text);
      } catch (e) {
        caught = e;
      }
      expect(isDatastoreError(caught, 'CheckpointMalformed'), body).toBe(true);
    }
    expect(parseCheckpoint('{"version":"vpc-cni-ipam/1","allocations":null}').allocations).toEqual([]);
  });
});

describe('restore', () => {
  it('restores the reference checkpoint, reports the entry outside every CIDR, and rewrites the file', () => {
    const cp = new InMemoryCheckpointer(REFERENCE_FILE);
    const ds = node(cp);
    const report = ds.restore();
    expect(report.found).toBe(true);
    expect(report.restored).toBe(2);
    expect(report.dropped).toHaveLength(1);
    expect(report.dropped[0]!.reason).toBe('outside-known-cidrs');
    expect(report.dropped[0]!.entry.ipv4).toBe('192.168.9.9');
    expect(ds.findByAddress('10.0.1.23')).toMatchObject({
      key: { networkName: 'aws-cni', containerID: 'a1b2', ifName: 'eth0' },
      metadata: { namespace: 'default', name: 'web-1', interfacesCount: 1 },
      assignedAt: 1700000000123,
    });
    expect(ds.findByAddress('10.0.2.4')?.cidr).toBe('10.0.2.0/28');
    // The rewritten file holds exactly the restored entries, in the reference's shape.
    expect(cp.text).toBe(
      '{"version":"vpc-cni-ipam/1","allocations":[' +
        '{"networkName":"aws-cni","containerID":"a1b2","ifName":"eth0","ipv4":"10.0.1.23","allocationTimestamp":1700000000123000000,"metadata":{"k8sPodNamespace":"default","k8sPodName":"web-1","interfacesCount":1}},' +
        '{"networkName":"aws-cni","containerID":"c3d4","ifName":"eth0","ipv4":"10.0.2.4","allocationTimestamp":1700000001000000000,"metadata":{}}]}',
    );
    // Restored addresses are not handed out again; the next free ones are.
    expect(ds.assign(pod(1)).address).toBe('10.0.1.24');
  });

  it('never hands out a restored prefix address twice', () => {
    const cp = new InMemoryCheckpointer(REFERENCE_FILE);
    const clock = new ManualClock();
    const ds = new Datastore({ clock, checkpointer: cp, prefixDelegation: true });
    eni(ds, 0);
    ds.addCidr('eni-0', '10.0.2.0/28');
    ds.restore();
    const got = new Set<string>();
    for (let i = 0; i < 15; i++) got.add(ds.assign(pod(i)).address);
    expect(got.has('10.0.2.4')).toBe(false);
    expect(got.size).toBe(15);
    expect(errorCode(() => ds.assign(pod(99)))).toBe('NoAvailableAddress');
  });

  it('reports entries the caller refuses (e.g. no host veth) as dropped', () => {
    const ds = node(new InMemoryCheckpointer(REFERENCE_FILE));
    const report = ds.restore({ keep: (e) => e.containerID !== 'c3d4' });
    expect(report.restored).toBe(1);
    expect(report.dropped.map((d) => [d.entry.containerID, d.reason])).toEqual([
      ['c3d4', 'rejected'],
      ['e5f6', 'outside-known-cidrs'],
    ]);
  });

  it('fails closed on duplicates, bad versions and unreadable stores, changing nothing', () => {
    const dupAddr = REFERENCE_FILE.replace(
      '"containerID":"c3d4","ifName":"eth0","ipv4":"10.0.2.4"',
      '"containerID":"c3d4","ifName":"eth0","ipv4":"10.0.1.23"',
    );
    const dupKey = REFERENCE_FILE.replace('"containerID":"c3d4"', '"containerID":"a1b2"');
    const cases: [string, string][] = [
      [dupAddr, 'CheckpointDuplicateAddress'],
      [dupKey, 'CheckpointDuplicatePodKey'],
      [REFERENCE_FILE.replace('ipam/1', 'ipam/9'), 'CheckpointUnknownVersion'],
      ['not json', 'CheckpointMalformed'],
    ];
    for (const [text, expected] of cases) {
      const cp = new InMemoryCheckpointer(text);
      const ds = node(cp);
      expect(errorCode(() => ds.restore())).toBe(expected);
      expect(ds.assignments()).toEqual([]);
      expect(cp.text).toBe(text);
    }
    const cp = new InMemoryCheckpointer(REFERENCE_FILE);
    cp.failReads();
    expect(errorCode(() => node(cp).restore())).toBe('CheckpointReadFailed');
  });

  it('treats a missing checkpoint as a fresh node and refuses to restore after assigning', () => {
    const ds = node(new InMemoryCheckpointer());
    expect(ds.restore()).toEqual({ found: false, restored: 0, dropped: [] });
    ds.assign(pod(1));
    expect(errorCode(() => ds.restore())).toBe('RestoreNotEmpty');
  });
});

describe('parseRestorableCheckpoint', () => {
  const entry = (containerID: string, ipv4: string) =>
    `{"networkName":"aws-cni","containerID":"${containerID}","ifName":"eth0","ipv4":"${ipv4}","allocationTimestamp":1,"metadata":{}}`;
  const file = (...entries: string[]) => `{"version":"vpc-cni-ipam/1","allocations":[${entries.join(',')}]}`;

  it('refuses what restore would refuse, before anything is restored', () => {
    expect(errorCode(() => parseRestorableCheckpoint('{not json'))).toBe('CheckpointMalformed');
    expect(
      errorCode(() => parseRestorableCheckpoint(file(entry('a', '10.0.1.1'), entry('b', '10.0.1.1')))),
    ).toBe('CheckpointDuplicateAddress');
    expect(
      errorCode(() => parseRestorableCheckpoint(file(entry('a', '10.0.1.1'), entry('a', '10.0.1.2')))),
    ).toBe('CheckpointDuplicatePodKey');
    expect(parseRestorableCheckpoint(REFERENCE_FILE).allocations).toHaveLength(3);
  });

  it('hands restore the document it checked, so the checkpoint is read once', () => {
    // A checkpointer whose reads fail: restore must not read it when given the document.
    const cp = new InMemoryCheckpointer(REFERENCE_FILE);
    cp.failReads();
    const ds = node(cp);
    const report = ds.restore({ document: parseRestorableCheckpoint(REFERENCE_FILE) });
    expect(report).toMatchObject({ found: true, restored: 2 });
    expect(node(cp).restore({ document: null })).toEqual({ found: false, restored: 0, dropped: [] });
  });
});

describe('file checkpointer', () => {
  const dirs: { remove: () => void }[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) d.remove();
  });

  it('writes atomically with mode 0600 after every assign/unassign and leaves no temp files', () => {
    const dir = scratchDir('vck-ds-');
    dirs.push(dir);
    const path = join(dir.path, 'ipam.json');
    const ds = node(createFileCheckpointer(path));
    ds.assign(pod(1), { namespace: 'default', name: 'a' });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(path, 'utf8')).allocations).toHaveLength(1);
    ds.assign(pod(2));
    ds.unassign(pod(1));
    const doc = JSON.parse(readFileSync(path, 'utf8'));
    expect(doc.version).toBe('vpc-cni-ipam/1');
    expect(doc.allocations.map((a: { containerID: string }) => a.containerID)).toEqual(['c-2']);
    expect(readdirSync(dir.path)).toEqual(['ipam.json']);
  });

  it('round-trips a node move: reference file → our daemon → file the reference can read', () => {
    const dir = scratchDir('vck-ds-');
    dirs.push(dir);
    const path = join(dir.path, 'ipam.json');
    writeFileSync(path, REFERENCE_FILE, { mode: 0o644 });
    const ds = node(createFileCheckpointer(path));
    ds.restore();
    const again = node(createFileCheckpointer(path));
    expect(again.restore().restored).toBe(2);
    expect(again.assignments().map((a) => a.address)).toEqual(['10.0.1.23', '10.0.2.4']);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('reports a failed write as CheckpointWriteFailed and undoes the assign', () => {
    const dir = scratchDir('vck-ds-');
    dirs.push(dir);
    const path = join(dir.path, 'gone', 'ipam.json');
    const ds = node(createFileCheckpointer(path));
    expect(errorCode(() => ds.assign(pod(1)))).toBe('CheckpointWriteFailed');
    expect(ds.assignments()).toEqual([]);
    mkdirSync(join(dir.path, 'gone'));
    expect(ds.assign(pod(1)).address).toBe('10.0.1.23');
    expect(createFileCheckpointer(join(dir.path, 'missing.json')).read()).toBeUndefined();
  });

  describe.each([
    ['createFileCheckpointer', createFileCheckpointer],
    ['createGroupCommitFileCheckpointer', createGroupCommitFileCheckpointer],
  ] as const)('%s: a path that is not a regular file', (_, create) => {
    /** The `CheckpointReadFailed` that reading `path` throws, with its message and `fileType`. */
    const readFailure = (path: string) => {
      try {
        return { read: create(path).read() };
      } catch (e) {
        if (!isDatastoreError(e, 'CheckpointReadFailed')) throw e;
        return { message: e.message, fileType: e.details.fileType };
      }
    };

    it('a FIFO is refused at once, never waited on for a writer', () => {
      const dir = scratchDir('vck-ds-');
      dirs.push(dir);
      // A writer that comes after 3 s, so a read that waits for one returns (and fails this test) instead of
      // hanging the test run; a read that does not wait is long done by then.
      const { path, stop } = fifoWithLateWriter(join(dir.path, 'ipam.json'), 3000, '{}');
      try {
        const started = performance.now();
        expect(readFailure(path)).toEqual({
          message: `cannot read checkpoint ${path}: it is a FIFO, not a regular file`,
          fileType: 'FIFO',
        });
        expect(performance.now() - started).toBeLessThan(2000);
      } finally {
        stop();
      }
    });

    it('a character device, a directory and a socket are named for what they are', async () => {
      const dir = scratchDir('vck-ds-');
      dirs.push(dir);
      // /dev/zero never ends: read whole, it would fill the memory.
      const device = join(dir.path, 'device.json');
      symlinkSync('/dev/zero', device);
      expect(readFailure(device)).toMatchObject({ fileType: 'character device' });
      const directory = join(dir.path, 'directory.json');
      mkdirSync(directory);
      expect(readFailure(directory)).toEqual({
        message: `cannot read checkpoint ${directory}: it is a directory, not a regular file`,
        fileType: 'directory',
      });
      const socket = join(dir.path, 'socket.json');
      const server = createServer();
      await new Promise<void>((r) => server.listen(socket, r));
      try {
        expect(readFailure(socket)).toMatchObject({ fileType: 'socket' });
      } finally {
        await new Promise((r) => server.close(r));
      }
      // A regular file through a symbolic link is read as before.
      writeFileSync(join(dir.path, 'real.json'), REFERENCE_FILE);
      symlinkSync(join(dir.path, 'real.json'), join(dir.path, 'link.json'));
      expect(readFailure(join(dir.path, 'link.json'))).toEqual({ read: REFERENCE_FILE });
    });
  });

  it('names per-network-card files as the reference does', () => {
    expect(checkpointPathForNetworkCard('/var/run/aws-node/ipam.json', 0)).toBe(
      '/var/run/aws-node/ipam.json',
    );
    expect(checkpointPathForNetworkCard('/var/run/aws-node/ipam.json', 2)).toBe(
      '/var/run/aws-node/ipam-nic-2.json',
    );
  });
});
