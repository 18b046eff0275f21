/** A binary min-heap ordered by `less`. Push and pop are O(log n). Used for free offsets inside a CIDR. */
export class MinHeap<T> {
  private readonly items: T[] = [];

  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(a[i]!, a[parent]!)) break;
      [a[i], a[parent]] = [a[parent]!, a[i]!];
      i = parent;
    }
  }

  pop(): T | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0];
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.less(a[l]!, a[m]!)) m = l;
        if (r < a.length && this.less(a[r]!, a[m]!)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m]!, a[i]!];
        i = m;
      }
    }
    return top;
  }

  /** Keeps only the items `keep` accepts (O(n)); used to drop stale entries now and then. */
  filter(keep: (item: T) => boolean): void {
    const kept = this.items.filter(keep);
    this.items.length = 0;
    for (const item of kept) this.push(item);
  }
}

/** A double-ended queue on an array with a moving head: push/shift/popBack amortized O(1). */
export class Deque<T> {
  private items: T[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  peek(): T | undefined {
    return this.items[this.head];
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.head += 1;
    if (this.head > 32 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  popBack(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    return this.items.pop();
  }

  /** Keeps only the items `keep` accepts (O(n)); used to drop stale entries now and then. */
  filter(keep: (item: T) => boolean): void {
    this.items = this.items.slice(this.head).filter(keep);
    this.head = 0;
  }

  /** How many items `match` accepts (O(n), no iterator: `stats` counts cooling addresses on every call). */
  count(match: (item: T) => boolean): number {
    let n = 0;
    for (let i = this.head; i < this.items.length; i++) if (match(this.items[i]!)) n += 1;
    return n;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = this.head; i < this.items.length; i++) yield this.items[i]!;
  }
}
