/** A one-line progress bar on stderr (redrawn in place on a terminal, a line per 10% otherwise). */
export class Progress {
  private readonly label: string;
  private readonly total: number;
  private lastTenth = -1;
  private readonly tty = process.stderr.isTTY === true;
  private readonly started = Date.now();

  constructor(label: string, total: number) {
    this.label = label;
    this.total = Math.max(1, total);
  }

  update(done: number, extra = ''): void {
    const frac = Math.min(1, done / this.total);
    const tenth = Math.floor(frac * 10);
    if (!this.tty && tenth === this.lastTenth) return;
    this.lastTenth = tenth;
    const width = 30;
    const bar = '█'.repeat(Math.round(frac * width)).padEnd(width, '░');
    const secs = ((Date.now() - this.started) / 1000).toFixed(1);
    const line = `${this.label.padEnd(22)} ${bar} ${(frac * 100).toFixed(0).padStart(3)}% ${secs}s ${extra}`;
    process.stderr.write(this.tty ? `\r${line}` : `${line}\n`);
  }

  /** `update` with the rate so far: `done` per second since the bar was made, as "12,345 <unit>/s". */
  updateRate(done: number, unit: string): void {
    const seconds = Math.max(0.001, (Date.now() - this.started) / 1000);
    this.update(done, `${Math.round(done / seconds).toLocaleString('en-US')} ${unit}/s`);
  }

  done(extra = ''): void {
    this.lastTenth = -1;
    this.update(this.total, extra);
    if (this.tty) process.stderr.write('\n');
  }
}
