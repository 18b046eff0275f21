import { Ec2SimError } from '../errors.js';

/**
 * The ClientTokens one action has seen: the same token with the same request names the resource the first
 * request created; with a different request it is `IdempotentParameterMismatch`.
 */
export class ClientTokens {
  readonly #seen = new Map<string, { fingerprint: string; id: string }>();

  /**
   * Looks a request up. Returns the request's fingerprint (for {@link ClientTokens.remember}) and the id of
   * the resource an earlier request with the same token created, if any.
   */
  replay(token: string | undefined, request: object): { fingerprint: string; id: string | undefined } {
    const fingerprint = JSON.stringify({ ...request, clientToken: undefined });
    const seen = token === undefined ? undefined : this.#seen.get(token);
    if (seen && seen.fingerprint !== fingerprint) {
      throw new Ec2SimError(
        'IdempotentParameterMismatch',
        'The client token you have provided is associated with a resource that is already deleted or has different parameters.',
      );
    }
    return { fingerprint, id: seen?.id };
  }

  /** Records the resource a request with `token` created. */
  remember(token: string | undefined, fingerprint: string, id: string): void {
    if (token !== undefined) this.#seen.set(token, { fingerprint, id });
  }
}
