/**
 * Streaming XML events for the spreadsheet readers. A scanner that jumps from `<` to `>` and
 * from quote to quote with indexOf, and cuts out only what a handler asks for: tag names, the
 * attributes it names, text while it wants text (references decoded). It reads what the
 * htmlparser2 tokenizer it replaced read, in XML mode, at a fraction of the cost per tag:
 * both quote styles, CDATA, comments, processing instructions and declarations (skipped),
 * namespace prefixes, self-closing tags, a chunk ending anywhere.
 */
import { decodeEntities, unfinishedReference } from './xml-entities.js';

export type Attributes = Readonly<Record<string, string>>;

export interface XmlHandler {
  /** `name` without its namespace prefix (`x:row` is `row`). */
  open(name: string, attributes: Attributes): void;
  close(name: string): void;
  /** Character data, called only while `wantText` is true; one value may come in pieces. */
  text(value: string): void;
  wantText: boolean;
  /** The attributes `open` needs (local names); absent = all. The others are never cut out. */
  attributes?: ReadonlySet<string>;
}

export interface XmlEvents {
  write(chunk: string): void;
  end(): void;
}

const GT = 0x3e;
const SLASH = 0x2f;
const EQUALS = 0x3d;
const COLON = 0x3a;
const DOUBLE_QUOTE = 0x22;
const SINGLE_QUOTE = 0x27;

/** XML's whitespace, and the form feed the tokenizer before this one took for it too. */
const isSpace = (code: number) => code === 0x20 || code === 0x0a || code === 0x09 || code === 0x0d || code === 0x0c;

/** What may follow `<` in markup: anything but whitespace and `>` (`<` then those is text). */
const opensMarkup = (code: number) => code !== GT && !isSpace(code);

const NO_ATTRIBUTES: Attributes = Object.freeze({});

/**
 * The longest tag read: its attributes are held until its `>` arrives, so a tag without end
 * (a gigabyte of attribute value inflates from a megabyte of zip) would be held whole. A cell's
 * text is at most 1 Mi characters in an attribute too; real tags are far shorter.
 */
export const MAX_TAG_CHARS = 4 * 1024 * 1024;

/** A construct whose end was not in the text yet: its terminator, and whether it is CDATA (text). */
interface Inside {
  end: string;
  cdata: boolean;
}

export function xmlEvents(handler: XmlHandler): XmlEvents {
  const scanner = new Scanner(handler);
  return {
    write: (chunk) => scanner.write(chunk),
    end: () => scanner.end(),
  };
}

class Scanner {
  /** The text from the first character not yet consumed: an unfinished tag or reference. */
  private pending = '';
  /**
   * Chunks kept back while `pending` is longer than them: each new look at an unfinished tag
   * then has at least twice the text, so a long one is not rescanned once per chunk.
   */
  private held: string[] = [];
  private heldLength = 0;
  private inside: Inside | undefined;
  /** The attribute `attribute` read last. */
  private attributeName: string | undefined;
  private attributeValue = '';
  private readonly wanted: readonly string[] | undefined;

  constructor(private readonly handler: XmlHandler) {
    this.wanted = handler.attributes === undefined ? undefined : [...handler.attributes];
  }

  write(chunk: string): void {
    if (chunk.length === 0) return;
    if (this.pending.length > this.heldLength + chunk.length) {
      this.held.push(chunk);
      this.heldLength += chunk.length;
      if (this.pending.length + this.heldLength > MAX_TAG_CHARS) this.tooLong();
      return;
    }
    this.run(chunk, false);
    if (this.pending.length > MAX_TAG_CHARS) this.tooLong();
  }

  private tooLong(): never {
    throw new Error(`a tag runs on past ${(MAX_TAG_CHARS / 1024 / 1024).toFixed(0)} Mi characters`);
  }

  end(): void {
    this.run('', true);
  }

  private run(chunk: string, final: boolean): void {
    let text = this.held.length === 0 ? chunk : this.held.join('') + chunk;
    this.held = [];
    this.heldLength = 0;
    let from = 0;
    if (this.pending !== '') {
      // The unfinished tag is finished alone, so the chunk is scanned as decoded: a string made
      // by joining the two would be read through an indirection at every character.
      const gt = final ? -1 : text.indexOf('>');
      const head = this.pending + text.slice(0, gt + 1);
      const at = gt === -1 ? 0 : this.scan(head, 0, false);
      if (at === head.length) from = gt + 1;
      else text = head.slice(at) + text.slice(gt + 1);
    }
    const at = this.scan(text, from, final);
    // At the end, what is left is an unfinished tag or reference: dropped, as before.
    this.pending = final || at >= text.length ? '' : text.slice(at);
  }

  /** Emits the events of `s` from `from` and returns where its unconsumed rest starts. */
  private scan(s: string, from: number, final: boolean): number {
    const n = s.length;
    let p = from;
    if (this.inside !== undefined) {
      p = this.skipTo(s, p, this.inside, final);
      if (this.inside !== undefined) return p;
    }
    while (p < n) {
      let lt = s.indexOf('<', p);
      while (lt !== -1 && lt + 1 < n && !opensMarkup(s.charCodeAt(lt + 1))) lt = s.indexOf('<', lt + 1);
      // A `<` that ends the text may open markup: it waits for the next chunk.
      const open = lt !== -1 && (lt + 1 < n || !final);
      const end = open ? lt : n;
      if (end > p && this.handler.wantText) {
        const kept = this.text(s, p, end, !final && end === n);
        if (kept < end) return kept;
      }
      if (!open) return n;
      if (lt + 1 === n) return lt;
      p = this.markup(s, lt, final);
      if (p === -1) return lt;
      if (this.inside !== undefined) return p;
    }
    return n;
  }

  /** Text `s[start, end)`; at the end of the text so far, an unfinished reference waits. Returns where it stopped. */
  private text(s: string, start: number, end: number, more: boolean): number {
    let raw = s.slice(start, end);
    if (raw.indexOf('&') === -1) {
      this.handler.text(raw);
      return end;
    }
    const unfinished = more ? unfinishedReference(raw) : -1;
    if (unfinished !== -1) raw = raw.slice(0, unfinished);
    if (raw.length > 0) this.handler.text(decodeEntities(raw));
    return unfinished === -1 ? end : start + unfinished;
  }

  /** The markup at `s[lt]`; returns the position after it, or -1 when it is not all there yet. */
  private markup(s: string, lt: number, final: boolean): number {
    const next = s.charCodeAt(lt + 1);
    if (next === SLASH) return this.closeTag(s, lt);
    if (next === 0x3f) return this.skipTo(s, lt + 2, { end: '?>', cdata: false }, final);
    if (next !== 0x21) return this.openTag(s, lt);
    // `<!`: CDATA, a comment or a declaration, told apart by up to 9 characters.
    const head = s.slice(lt, lt + 9);
    if (head === '<![CDATA[') return this.skipTo(s, lt + 9, { end: ']]>', cdata: true }, final);
    if (head.startsWith('<!--')) return this.skipTo(s, lt + 2, { end: '-->', cdata: false }, final);
    const undecided = head.length < 9 && !final && ('<![CDATA['.startsWith(head) || '<!--'.startsWith(head));
    return undecided ? -1 : this.skipTo(s, lt + 2, { end: '>', cdata: false }, final);
  }

  /**
   * Skips to after `inside.end`, handing CDATA to the handler as text; when the end is not in
   * `s` yet, keeps only what may be its start and remembers to go on looking.
   */
  private skipTo(s: string, from: number, inside: Inside, final: boolean): number {
    const found = s.indexOf(inside.end, from);
    const stop = found !== -1 ? found : final ? s.length : Math.max(from, s.length - inside.end.length + 1);
    if (inside.cdata && stop > from && this.handler.wantText) this.handler.text(s.slice(from, stop));
    this.inside = found === -1 && !final ? inside : undefined;
    return found === -1 ? stop : found + inside.end.length;
  }

  /** `</name>`; whitespace may come before `>`. */
  private closeTag(s: string, lt: number): number {
    const gt = s.indexOf('>', lt + 2);
    if (gt === -1) return -1;
    let start = lt + 2;
    while (start < gt && isSpace(s.charCodeAt(start))) start++;
    if (start === gt || s.charCodeAt(start) === SLASH) return gt + 1;
    let end = start;
    let colon = -1;
    for (; end < gt; end++) {
      const code = s.charCodeAt(end);
      if (isSpace(code)) break;
      if (code === COLON && colon === -1) colon = end;
    }
    this.handler.close(s.slice(colon === -1 ? start : colon + 1, end));
    return gt + 1;
  }

  /** `<name attributes>` or `<name attributes/>`. */
  private openTag(s: string, lt: number): number {
    const n = s.length;
    let p = lt + 1;
    let colon = -1;
    for (; p < n; p++) {
      const code = s.charCodeAt(p);
      if (code === GT || code === SLASH || isSpace(code)) break;
      if (code === COLON && colon === -1) colon = p;
    }
    if (p >= n) return -1;
    const name = s.slice(colon === -1 ? lt + 1 : colon + 1, p);
    let attributes: Record<string, string> | undefined;
    for (;;) {
      while (p < n && isSpace(s.charCodeAt(p))) p++;
      if (p >= n) return -1;
      const code = s.charCodeAt(p);
      if (code === GT) {
        this.handler.open(name, attributes ?? NO_ATTRIBUTES);
        return p + 1;
      }
      if (code === SLASH) {
        p++;
        while (p < n && isSpace(s.charCodeAt(p))) p++;
        if (p >= n) return -1;
        if (s.charCodeAt(p) !== GT) continue;
        this.handler.open(name, attributes ?? NO_ATTRIBUTES);
        this.handler.close(name);
        return p + 1;
      }
      p = this.attribute(s, p);
      if (p === -1) return -1;
      if (this.attributeName !== undefined) (attributes ??= {})[this.attributeName] = this.attributeValue;
    }
  }

  /**
   * The attribute at `s[start]` (`name="value"`, `name='value'`, `name=value` or `name`): sets
   * `attributeName` (undefined when not wanted) and `attributeValue`, and returns where it
   * ends, or -1 when it is not all there yet.
   */
  private attribute(s: string, start: number): number {
    const n = s.length;
    // The first character is the name's, whatever it is (as `=` in `<a =b>` was before).
    let local = s.charCodeAt(start) === COLON ? start + 1 : start;
    let p = start + 1;
    for (; p < n; p++) {
      const code = s.charCodeAt(p);
      if (code === EQUALS || code === GT || code === SLASH || isSpace(code)) break;
      if (code === COLON && local === start) local = p + 1;
    }
    const nameEnd = p;
    while (p < n && isSpace(s.charCodeAt(p))) p++;
    if (p >= n) return -1;
    this.attributeName = this.key(s, local, nameEnd);
    this.attributeValue = '';
    if (s.charCodeAt(p) !== EQUALS) return p;
    p++;
    while (p < n && isSpace(s.charCodeAt(p))) p++;
    if (p >= n) return -1;
    const quote = s.charCodeAt(p);
    let valueStart = p;
    let valueEnd: number;
    if (quote === DOUBLE_QUOTE || quote === SINGLE_QUOTE) {
      valueStart = p + 1;
      valueEnd = s.indexOf(quote === DOUBLE_QUOTE ? '"' : "'", valueStart);
      if (valueEnd === -1) return -1;
      p = valueEnd + 1;
    } else {
      while (p < n && s.charCodeAt(p) !== GT && !isSpace(s.charCodeAt(p))) p++;
      if (p >= n) return -1;
      valueEnd = p;
    }
    if (this.attributeName !== undefined) {
      const value = s.slice(valueStart, valueEnd);
      this.attributeValue = value.indexOf('&') === -1 ? value : decodeEntities(value);
    }
    return p;
  }

  /** The attribute name `s[start, end)` as the handler's key, or undefined when it does not want it. */
  private key(s: string, start: number, end: number): string | undefined {
    const { wanted } = this;
    if (wanted === undefined) return s.slice(start, end);
    for (const name of wanted) if (name.length === end - start && s.startsWith(name, start)) return name;
    return undefined;
  }
}

/** OOXML's escape for characters XML cannot hold (`_x000D_` is a CR; `_x005F_` a `_`). */
export function unescapeOoxml(text: string): string {
  if (!text.includes('_x')) return text;
  return text.replace(/_x([0-9A-Fa-f]{4})_/g, (_match, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}
