/**
 * The reader's XML events as they were made before src/import/read/xml-events.ts had its own
 * scanner: htmlparser2's tokenizer (XML mode, entities decoded) and a small adapter. Kept as
 * the reference the scanner is compared with (input.xml-scanner.test.ts).
 */
import { Tokenizer } from 'htmlparser2';
import type { XmlEvents, XmlHandler } from '../src/import/read/xml-events.js';

export function tokenizerEvents(handler: XmlHandler): XmlEvents {
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
  let attributes: Record<string, string> = {};
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
