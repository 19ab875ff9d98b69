/** Sum of the samples of metric `name` in a Prometheus text page whose labels include `label`, e.g. stored_in="spool". */
export function metricSum(text: string, name: string, label: string): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) && line.includes(label))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}
