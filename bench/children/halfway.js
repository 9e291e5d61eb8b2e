/**
 * The second half of a run, apart: CPU and time from the moment half the rows are done to
 * the end. A fresh process pays a fixed start-up (JIT compilation, first connections,
 * first-use setup) that the first half absorbs; the second half shows the cost per row and
 * the rate a long import runs at. Call done() once per finished row, result() at the end.
 */
export function halfway(rows) {
  const half = Math.floor(rows / 2);
  let finished = 0;
  let cpuAt;
  let timeAt;
  return {
    done() {
      if (++finished !== half) return;
      cpuAt = process.cpuUsage();
      timeAt = performance.now();
    },
    result() {
      if (cpuAt === undefined) return undefined;
      const cpu = process.cpuUsage(cpuAt);
      const elapsedS = (performance.now() - timeAt) / 1000;
      const steadyRows = finished - half;
      return { rows: steadyRows, elapsedS, rowsPerSecond: steadyRows / elapsedS, cpuS: (cpu.user + cpu.system) / 1e6 };
    },
  };
}
