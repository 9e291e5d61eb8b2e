// Text as a program writing the Windows ANSI code page (windows-1252) saves it: for the fixture scripts.

// WHATWG windows-1252 code points of bytes 0x80–0x9F; the other bytes are Latin-1.
const CP1252_HIGH = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d,
  0x17d, 0x8f, 0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a,
  0x153, 0x9d, 0x17e, 0x178,
];

/** @param {string} text @returns {Buffer} */
export function windows1252(text) {
  return Buffer.from(
    [...text].map((char) => {
      const code = char.codePointAt(0) ?? 0;
      if (code < 0x80 || (code >= 0xa0 && code <= 0xff)) return code;
      const high = CP1252_HIGH.indexOf(code);
      if (high === -1) throw new Error(`${char} has no windows-1252 byte`);
      return 0x80 + high;
    }),
  );
}
