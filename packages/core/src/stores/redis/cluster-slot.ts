/** The Redis Cluster slot of a key, as the server computes it: checks of one slot may share a script call. */

const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[byte] = crc;
  }
  return table;
})();

/**
 * CRC16 (XMODEM) of the key's hash tag — the part between the first `{` and the next `}`, when not
 * empty — or of the whole key, modulo 16384. Keys are UTF-8 encoded first, as Redis sees them.
 *
 * @example
 * clusterSlot('tollgate:{login/ip:1.2.3.4}:Xq3v0Jc9a1Rb'); // the slot of 'login/ip:1.2.3.4'
 */
export function clusterSlot(key: string): number {
  const open = key.indexOf('{');
  const close = open === -1 ? -1 : key.indexOf('}', open + 1);
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of Buffer.from(hashed, 'utf8')) {
    crc = ((crc << 8) & 0xffff) ^ (TABLE[((crc >> 8) ^ byte) & 0xff] as number);
  }
  return crc & 0x3fff;
}
