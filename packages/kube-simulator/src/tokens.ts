import { randomBytes } from 'node:crypto';
import type { UserInfo } from './rbac.js';

/** A minted ServiceAccount token's binding. */
export interface ServiceAccountBinding {
  /** Namespace of the ServiceAccount. */
  readonly namespace: string;
  /** Name of the ServiceAccount. */
  readonly name: string;
  /** UID of the ServiceAccount when the token was minted (a recreated account invalidates the token). */
  readonly uid: string;
}

/** Token registry state (plain JSON, part of snapshots). */
export interface TokenSnapshot {
  /** The administrator token (`system:masters`). */
  readonly admin: string;
  /** ServiceAccount tokens. */
  readonly serviceAccounts: Readonly<Record<string, ServiceAccountBinding>>;
}

/** The user a ServiceAccount authenticates as. */
export function serviceAccountUser(namespace: string, name: string): UserInfo {
  return {
    name: `system:serviceaccount:${namespace}:${name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
  };
}

/** The user of the administrator token. */
export const ADMIN_USER: UserInfo = {
  name: 'kube-sim:admin',
  groups: ['system:masters', 'system:authenticated'],
};

/** Mints opaque bearer tokens and maps them back to users. */
export class TokenRegistry {
  #admin: string;
  #sa = new Map<string, ServiceAccountBinding>();

  /** @param snapshot - state to start from (a fresh admin token otherwise) */
  constructor(snapshot?: TokenSnapshot) {
    this.#admin = snapshot?.admin ?? TokenRegistry.#newToken('admin');
    for (const [t, b] of Object.entries(snapshot?.serviceAccounts ?? {})) this.#sa.set(t, b);
  }

  static #newToken(prefix: string): string {
    return `${prefix}.${randomBytes(24).toString('base64url')}`;
  }

  /** The administrator token. */
  get adminToken(): string {
    return this.#admin;
  }

  /** Mints a token for a ServiceAccount (the caller checks that it exists). */
  mint(binding: ServiceAccountBinding): string {
    const token = TokenRegistry.#newToken('sa');
    this.#sa.set(token, binding);
    return token;
  }

  /** Looks a token up: the admin, a ServiceAccount binding, or undefined. */
  lookup(token: string): 'admin' | ServiceAccountBinding | undefined {
    if (token === this.#admin) return 'admin';
    return this.#sa.get(token);
  }

  /** Plain JSON copy. */
  snapshot(): TokenSnapshot {
    return { admin: this.#admin, serviceAccounts: Object.fromEntries(this.#sa) };
  }
}
