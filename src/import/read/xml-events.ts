/**
 * Streaming XML events for the spreadsheet readers, from htmlparser2's tokenizer (XML mode,
 * entities decoded). The tokenizer reports positions, not strings: only what a handler asks
 * for is cut out of the text, which is what makes it three times the speed of an evented
 * parser building every tag's attributes and text.
 */
import { Tokenizer } from 'htmlparser2';

export type Attributes = Record<string, string>;

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

export function xmlEvents(handler: XmlHandler): XmlEvents {
  // The text since the oldest position still to be cut: positions count from the start.
  const buffers: string[] = [];
  let bufferOffset = 0;
  const slice = (start: number, end: number): string => {
    while (start - bufferOffset >= buffers[0]!.length) bufferOffset += buffers.shift()!.length;
    let text = buffers[0]!.slice(start - bufferOffset, end - bufferOffset);
    while (end - bufferOffset > buffers[0]!.length) {
      bufferOffset += buffers.shift()!.length;
      text += buffers[0]!.slice(0, end - bufferOffset);
    }
    return text;
  };
  const local = (name: string) => {
    const colon = name.indexOf(':');
    return colon === -1 ? name : name.slice(colon + 1);
  };

  let tag = '';
  let attributes: Attributes = {};
  let attribute = '';
  let value = '';
  let wanted = true;
  const only = handler.attributes;
  const tokenizer = new Tokenizer(
    { xmlMode: true, decodeEntities: true },
    {
      onopentagname(start, end) {
        tag = local(slice(start, end));
        attributes = {};
      },
      onattribname(start, end) {
        attribute = local(slice(start, end));
        wanted = only === undefined || only.has(attribute);
        value = '';
      },
      onattribdata(start, end) {
        if (wanted) value += slice(start, end);
      },
      onattribentity(codepoint) {
        if (wanted) value += String.fromCodePoint(codepoint);
      },
      onattribend() {
        if (wanted) attributes[attribute] = value;
      },
      onopentagend() {
        handler.open(tag, attributes);
      },
      onselfclosingtag() {
        handler.open(tag, attributes);
        handler.close(tag);
      },
      onclosetag(start, end) {
        handler.close(local(slice(start, end)));
      },
      ontext(start, end) {
        if (handler.wantText) handler.text(slice(start, end));
      },
      ontextentity(codepoint) {
        if (handler.wantText) handler.text(String.fromCodePoint(codepoint));
      },
      oncdata(start, end, endOffset) {
        if (handler.wantText) handler.text(slice(start, end - endOffset));
      },
      oncomment() {},
      ondeclaration() {},
      onprocessinginstruction() {},
      onend() {},
    },
  );
  return {
    write(chunk) {
      if (chunk.length === 0) return;
      buffers.push(chunk);
      tokenizer.write(chunk);
    },
    end() {
      tokenizer.end();
    },
  };
}

/** OOXML's escape for characters XML cannot hold (`_x000D_` is a CR; `_x005F_` a `_`). */
export function unescapeOoxml(text: string): string {
  if (!text.includes('_x')) return text;
  return text.replace(/_x([0-9A-Fa-f]{4})_/g, (_match, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}
