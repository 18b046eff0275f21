/**
 * Test helpers for code built on eni-manager's {@link Ec2Api}. EC2 itself is faked by
 * `@vpc-cni-kit/ec2-simulator` (over real HTTP, through the real SDK); what it cannot do is answer with a
 * malformed reply, which {@link editedEc2Api} adds on top of it.
 *
 * @packageDocumentation
 */
import type { Ec2Action, Ec2Actions } from '../ec2/actions.js';
import type { Ec2Api } from '../ec2/client.js';

/**
 * An {@link Ec2Api} that passes every call to `inner` and lets `edit` change the parsed output of `action`'s
 * replies before the caller sees them: a reply with a malformed or missing field, for tests of the code that
 * reads it (every other action, and the call itself, are `inner`'s). `destroy` destroys `inner`.
 *
 * @example
 * ```ts
 * const garbled = editedEc2Api(ec2, 'CreateNetworkInterface', (out) => {
 *   out.NetworkInterface!.MacAddress = '02:00:00:00:00';
 * });
 * ```
 */
export function editedEc2Api<E extends Ec2Action>(
  inner: Ec2Api,
  action: E,
  edit: (out: Ec2Actions[E][1]) => void,
): Ec2Api {
  return {
    async call(a, input) {
      const out = await inner.call(a, input);
      if ((a as Ec2Action) === action) edit(out as Ec2Actions[E][1]);
      return out;
    },
    destroy: () => inner.destroy(),
  };
}
