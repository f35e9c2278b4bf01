/** Monotonic milliseconds for detection windows: wall-clock jumps must not open or close a window. */
export const now = (): number => {
  return performance.now();
};
