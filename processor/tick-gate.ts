/**
 * Serialises the periodic tick with the partitions' batches: batches share the gate (partitions still run side by
 * side), the tick holds it alone. A tick therefore never interleaves with a batch transaction: it starts after the
 * in-flight batches committed and applied their changes to memory, and no batch starts until it committed, so it
 * neither overwrites a fresher score with an older one nor races a batch for an issue row.
 */
export class TickGate {
  private sharedHolders = 0;
  private exclusiveHeld = false;
  /** Waiters in arrival order; an exclusive waiter blocks later shared ones (no starvation of the tick). */
  private readonly queue: { exclusive: boolean; wake: () => void }[] = [];

  async shared<T>(fn: () => Promise<T>): Promise<T> {
    if (this.exclusiveHeld || this.queue.length > 0)
      await new Promise<void>((wake) => this.queue.push({ exclusive: false, wake }));
    else this.sharedHolders++;
    try {
      return await fn();
    } finally {
      this.sharedHolders--;
      this.drain();
    }
  }

  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    if (this.exclusiveHeld || this.sharedHolders > 0 || this.queue.length > 0)
      await new Promise<void>((wake) => this.queue.push({ exclusive: true, wake }));
    else this.exclusiveHeld = true;
    try {
      return await fn();
    } finally {
      this.exclusiveHeld = false;
      this.drain();
    }
  }

  private drain(): void {
    while (this.queue.length > 0 && !this.exclusiveHeld) {
      const next = this.queue[0];
      if (next.exclusive) {
        if (this.sharedHolders > 0) return;
        this.queue.shift();
        this.exclusiveHeld = true;
        next.wake();
        return;
      }
      this.queue.shift();
      this.sharedHolders++;
      next.wake();
    }
  }
}
