/**
 * The entries of a comma-separated list variable, each trimmed; none when the whole value is blank.
 * An empty entry (`a,,b`, a trailing comma) throws, naming its place: it is most often a variable
 * interpolated while unset (`${PROXY_IP},loopback`), and dropped silently it would leave out what
 * the operator meant to list.
 */
export function listEntries(text: string): string[] {
  if (text.trim() === '') return [];
  return text.split(',').map((raw, index) => {
    const entry = raw.trim();
    if (entry === '')
      throw new Error(`entry ${index + 1} is empty (two commas in a row, or a variable left unset?)`);
    return entry;
  });
}
