import type { RandomSource } from './clock.js';

/** Generates AWS-looking identifiers (`eni-0123456789abcdef0`) and MACs from an injected random source. */
export class IdGenerator {
  readonly #random: RandomSource;
  readonly #issued = new Set<string>();

  /** @param random - the random source */
  constructor(random: RandomSource) {
    this.#random = random;
  }

  #hex(n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += Math.floor(this.#random() * 16).toString(16);
    return s;
  }

  /** A fresh id with the given prefix and 17 hex digits, never repeated. */
  id(prefix: string): string {
    for (;;) {
      const id = `${prefix}-0${this.#hex(16)}`;
      if (!this.#issued.has(id)) {
        this.#issued.add(id);
        return id;
      }
    }
  }

  /** Records an id given from outside (a scenario) so it is never generated. */
  reserve(id: string): void {
    this.#issued.add(id);
  }

  /** A fresh locally administered unicast MAC (`02:xx:xx:xx:xx:xx`), never repeated. */
  mac(): string {
    for (;;) {
      const mac = `02:${Array.from({ length: 5 }, () => this.#hex(2)).join(':')}`;
      if (!this.#issued.has(mac)) {
        this.#issued.add(mac);
        return mac;
      }
    }
  }

  /** A request id in UUID form. */
  requestId(): string {
    const h = this.#hex(32);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20)}`;
  }
}
