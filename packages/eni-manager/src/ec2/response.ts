import { type EniManagerError, eniError } from '../errors.js';

/** The `Ec2InvalidResponse` error for one field of one action's response. */
export function invalidEc2Response(action: string, field: string, problem: string): EniManagerError {
  return eniError('Ec2InvalidResponse', `EC2 ${action} returned ${problem}`, { action, field });
}

/**
 * Reads the fields of one EC2 response (or one element of it) through the shape checks in `../shapes.js`, the
 * same checks IMDS values pass. Every read names its field by its path in the SDK's output
 * (`NetworkInterface.Attachment.DeviceIndex`), so a missing or malformed value becomes an `Ec2InvalidResponse`
 * that says which action and which field, before the caller acts on anything.
 */
export class Ec2Fields {
  /**
   * @param action The EC2 action whose response is read, e.g. `DescribeNetworkInterfaces`.
   * @param path Where this object sits in the response, e.g. `NetworkInterfaces[3]` (empty for the top level).
   */
  constructor(
    readonly action: string,
    readonly path = '',
  ) {}

  /** The fields of a member of this object: `name` is appended to the path (`Attachment`, `Groups[0]`). */
  at(name: string): Ec2Fields {
    return new Ec2Fields(this.action, this.pathOf(name));
  }

  /** A required field that `check` accepts; throws `Ec2InvalidResponse` when it is missing or rejected. */
  required<V, T>(name: string, value: V | null | undefined, check: (v: V) => T | undefined, what: string): T {
    if (absent(value)) throw invalidEc2Response(this.action, this.pathOf(name), `no ${this.pathOf(name)}`);
    return this.checked(name, value, check, what);
  }

  /** An optional field: `undefined` when absent, else as {@link Ec2Fields.required}. */
  optional<V, T>(
    name: string,
    value: V | null | undefined,
    check: (v: V) => T | undefined,
    what: string,
  ): T | undefined {
    return absent(value) ? undefined : this.checked(name, value, check, what);
  }

  /**
   * A list field, each element read by `read` with the element's own {@link Ec2Fields}
   * (`Ipv4Prefixes[2]`); an absent list is empty, as EC2 leaves out empty lists.
   */
  list<E, T>(name: string, items: readonly E[] | undefined, read: (item: E, fields: Ec2Fields) => T): T[] {
    return (items ?? []).map((item, i) => read(item, this.at(`${name}[${i}]`)));
  }

  /** A required field whose value is only compared, never used as an address or id (a status, a type). */
  present<V>(name: string, value: V | null | undefined): V {
    if (absent(value)) throw invalidEc2Response(this.action, this.pathOf(name), `no ${this.pathOf(name)}`);
    return value;
  }

  private checked<V, T>(name: string, value: V, check: (v: V) => T | undefined, what: string): T {
    const result = check(value);
    if (result === undefined) {
      const shown = JSON.stringify(String(value).slice(0, 80));
      throw invalidEc2Response(
        this.action,
        this.pathOf(name),
        `${this.pathOf(name)} that is not ${what}: ${shown}`,
      );
    }
    return result;
  }

  private pathOf(name: string): string {
    if (this.path === '' || name === '') return this.path + name;
    return name.startsWith('[') ? `${this.path}${name}` : `${this.path}.${name}`;
  }
}

function absent<V>(value: V | null | undefined): value is null | undefined {
  return value === undefined || value === null || (value as unknown) === '';
}
