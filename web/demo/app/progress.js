// Download progress as people read it: percent, bytes, speed (over the last few seconds) and time
// left, from the engine's onProgress({loaded, total, source}) callbacks.
import { bytes, duration, rate } from './format.js';

const WINDOW_MS = 3000;  // the speed is measured over this much recent time

export class ProgressMeter {
  constructor(now = () => performance.now()) {
    this.now = now;
    this.samples = [];  // [time, loaded]
  }

  /** The view of one progress event: {fraction (0..1, or null when the total is unknown), percent, speed, eta, text}. */
  update({ loaded, total, source }) {
    const t = this.now();
    this.samples.push([t, loaded]);
    while (this.samples.length > 2 && t - this.samples[0][0] > WINDOW_MS) this.samples.shift();
    const [t0, l0] = this.samples[0];
    const speed = t > t0 ? ((loaded - l0) * 1000) / (t - t0) : 0;
    const fraction = total > 0 ? Math.min(1, loaded / total) : null;
    const eta = total > 0 && speed > 0 ? (total - loaded) / speed : null;
    const percent = fraction === null ? null : Math.floor(fraction * 100);
    const where = source === 'cache' ? 'from storage' : source === 'network' ? 'downloading' : 'reading';
    const parts = [where];
    if (percent !== null) parts.push(`${percent}%`);
    parts.push(total > 0 ? `${bytes(loaded)} of ${bytes(total)}` : bytes(loaded));
    if (speed > 0) parts.push(rate(speed));
    if (eta !== null && percent !== 100) parts.push(`${duration(eta)} left`);
    return { fraction, percent, speed, eta, text: parts.join(' · ') };
  }
}
