import { describe, expect, it } from 'vitest';
import {
  CniErrorCode,
  formatCniArgs,
  identifierProblem,
  interfaceNameProblem,
  isCniError,
  parseCniArgs,
  readCniEnv,
} from '../src/index.js';

function codeOf(fn: () => unknown): number | undefined {
  try {
    fn();
    return undefined;
  } catch (e) {
    return isCniError(e) ? e.code : -1;
  }
}

describe('parseCniArgs', () => {
  it('reads what containerd sends, in any order', () => {
    const a = parseCniArgs(
      'K8S_POD_UID=u-1;IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-0;K8S_POD_INFRA_CONTAINER_ID=abc',
    );
    expect(a).toMatchObject({
      ignoreUnknown: true,
      podName: 'web-0',
      podNamespace: 'default',
      podInfraContainerId: 'abc',
      podUid: 'u-1',
    });
  });
  it('treats empty input as no arguments', () => {
    expect(parseCniArgs('')).toEqual({ ignoreUnknown: false, values: {} });
    expect(parseCniArgs(undefined).values).toEqual({});
  });
  it.each(['a', 'a=b=c', '=v', 'IgnoreUnknown=maybe'])('rejects %j with code 4', (s) => {
    expect(codeOf(() => parseCniArgs(s))).toBe(CniErrorCode.InvalidEnvironment);
  });
  it('rejects a key given twice with different values (code 4), accepts the same pair twice', () => {
    expect(codeOf(() => parseCniArgs('K8S_POD_NAME=a;K8S_POD_NAME=b'))).toBe(CniErrorCode.InvalidEnvironment);
    expect(codeOf(() => parseCniArgs('IgnoreUnknown=1;FOO=x;FOO=y'))).toBe(CniErrorCode.InvalidEnvironment);
    expect(parseCniArgs('K8S_POD_NAME=a;K8S_POD_NAME=a').podName).toBe('a');
  });
  it('rejects unknown keys only when the plugin says what it knows and IgnoreUnknown is off', () => {
    expect(codeOf(() => parseCniArgs('FOO=1', { known: [] }))).toBe(CniErrorCode.InvalidEnvironment);
    expect(codeOf(() => parseCniArgs('FOO=1;IgnoreUnknown=true', { known: [] }))).toBeUndefined();
    expect(codeOf(() => parseCniArgs('FOO=1'))).toBeUndefined();
  });
  it('formats and round-trips', () => {
    const s = formatCniArgs({ IgnoreUnknown: '1', K8S_POD_NAME: 'p' });
    expect(parseCniArgs(s).values).toEqual({ IgnoreUnknown: '1', K8S_POD_NAME: 'p' });
    expect(codeOf(() => formatCniArgs({ 'a;b': 'c' }))).toBe(CniErrorCode.InvalidEnvironment);
  });
});

describe('readCniEnv', () => {
  const base = {
    CNI_CONTAINERID: 'c1',
    CNI_NETNS: '/run/netns/x',
    CNI_IFNAME: 'eth0',
    CNI_PATH: '/opt/cni/bin:/usr/lib/cni',
  };
  it('returns typed values', () => {
    expect(readCniEnv({ ...base, CNI_COMMAND: 'ADD', CNI_ARGS: 'K8S_POD_NAME=p' })).toMatchObject({
      command: 'ADD',
      containerId: 'c1',
      path: ['/opt/cni/bin', '/usr/lib/cni'],
      args: { podName: 'p' },
    });
  });
  it.each([
    ['ADD', { ...base, CNI_NETNS: '' }, /\[CNI_NETNS\] missing/],
    ['CHECK', { ...base, CNI_IFNAME: '' }, /\[CNI_IFNAME\] missing/],
    ['DEL', { CNI_PATH: '/x' }, /\[CNI_CONTAINERID CNI_IFNAME\] missing/],
    ['GC', {}, /\[CNI_PATH\] missing/],
    ['STATUS', {}, /\[CNI_PATH\] missing/],
    ['ADD', { ...base, CNI_CONTAINERID: 'bad id' }, /invalid characters in CNI_CONTAINERID/],
    ['ADD', { ...base, CNI_IFNAME: 'a-very-long-ifname' }, /longer than 15 bytes/],
    ['FLY', base, /unknown CNI_COMMAND "FLY"/],
    ['', base, /\[CNI_COMMAND\] missing/],
  ])('%s rejects %j with code 4', (command, env, msg) => {
    try {
      readCniEnv({ ...env, CNI_COMMAND: command });
      expect.fail('expected an error');
    } catch (e) {
      expect(isCniError(e) && e.code).toBe(CniErrorCode.InvalidEnvironment);
      expect(isCniError(e) && `${e.message} ${e.details ?? ''}`).toMatch(msg);
    }
  });
  it('lets DEL run without a netns (containerd’s second DEL)', () => {
    expect(readCniEnv({ ...base, CNI_NETNS: '', CNI_COMMAND: 'DEL' }).netns).toBe('');
  });
  it.each([
    ['', 'is empty'],
    ['..', 'must not be . or ..'],
    ['a/b', 'must not contain /, : or whitespace'],
    ['a b', 'must not contain /, : or whitespace'],
    ['eth0', undefined],
  ])('interface name %j', (name, problem) => {
    expect(interfaceNameProblem(name)).toBe(problem);
  });
  it.each([
    ['', 'is empty'],
    ['-x', 'must be letters, digits, _, . and -, starting with a letter or digit'],
    ['a;b', 'must be letters, digits, _, . and -, starting with a letter or digit'],
    ['../etc', 'must be letters, digits, _, . and -, starting with a letter or digit'],
    ['0123abc_d.e-f', undefined],
  ])('identifier %j', (id, problem) => {
    expect(identifierProblem(id)).toBe(problem);
  });
});
