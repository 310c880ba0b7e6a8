/**
 * A fixed-capacity FIFO: adding to a full ring drops its oldest item, and dropping the oldest is
 * O(1) either way (an array's `shift` moves every item: a full request log paid O(n) per request).
 */
export class Ring<T> {
  private slots: (T | undefined)[] = [];
  /** Slot of the oldest item. */
  private head = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    if (!(Number.isInteger(capacity) && capacity > 0)) throw new Error(`ring capacity must be a positive integer, got ${capacity}`);
  }

  get size(): number {
    return this.count;
  }

  /** Adds `item` as the newest; returns the oldest item when the ring was full and dropped it. */
  push(item: T): T | undefined {
    let dropped: T | undefined;
    if (this.count === this.capacity) dropped = this.shift();
    const slot = (this.head + this.count) % this.capacity;
    if (slot === this.slots.length) this.slots.push(item);
    else this.slots[slot] = item;
    this.count += 1;
    return dropped;
  }

  /** Removes and returns the oldest item. */
  shift(): T | undefined {
    if (this.count === 0) return undefined;
    const item = this.slots[this.head];
    this.slots[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.count -= 1;
    return item;
  }

  /** The items, oldest first. */
  toArray(): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.count; i++) out.push(this.slots[(this.head + i) % this.capacity] as T);
    return out;
  }

  clear(): void {
    this.slots = [];
    this.head = 0;
    this.count = 0;
  }
}
