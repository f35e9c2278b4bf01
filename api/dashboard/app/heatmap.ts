/** Heat drawn on a canvas: each point a soft disc, summed, then coloured from cool to hot. */
export interface HeatPoint {
  x: number;
  y: number;
}

export function drawHeat(canvas: HTMLCanvasElement, points: HeatPoint[], radius: number): void {
  const w = canvas.width;
  const h = canvas.height;
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  ctx.clearRect(0, 0, w, h);
  if (points.length === 0) return;
  // Intensity in the alpha channel first…
  // Low per point, so one click shows cool and only crowds turn hot.
  const alpha = Math.min(0.3, 4 / Math.sqrt(points.length + 1));
  for (const p of points) {
    const g = ctx.createRadialGradient(p.x * w, p.y * h, 0, p.x * w, p.y * h, radius);
    g.addColorStop(0, `rgba(0,0,0,${alpha})`);
    g.addColorStop(1, 'rgba(0,0,0,0)');
    ctx.fillStyle = g;
    ctx.fillRect(p.x * w - radius, p.y * h - radius, radius * 2, radius * 2);
  }
  // …then mapped to colour: blue (few) to red (many).
  const img = ctx.getImageData(0, 0, w, h);
  const d = img.data;
  for (let i = 0; i < d.length; i += 4) {
    const a = d[i + 3] / 255;
    if (a === 0) continue;
    const hue = (1 - Math.min(1, a * 1.3)) * 240;
    const [r, g, b] = hsl(hue / 360, 1, 0.5);
    d[i] = r;
    d[i + 1] = g;
    d[i + 2] = b;
    d[i + 3] = Math.min(220, a * 400);
  }
  ctx.putImageData(img, 0, 0);
}

function hsl(h: number, s: number, l: number): [number, number, number] {
  const f = (n: number) => {
    const k = (n + h * 12) % 12;
    const a = s * Math.min(l, 1 - l);
    return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return [f(0), f(8), f(4)];
}
