import { randomBytes } from 'node:crypto';

/**
 * A value some producer has already written as JSON text (the database's `string_agg` of 2,000 pages for the scores
 * route), placed anywhere in an answer's data. `serializeJson` splices the text into the answer as it is, so a large
 * part the database built is neither parsed nor stringified again; everything else of the answer is serialized as
 * usual, through the one envelope. The producer owns the text being valid JSON and equal to what `JSON.stringify`
 * would write for the value it stands for (the scores read model's test holds its text to that).
 *
 * Outside `serializeJson` (`JSON.stringify` of an answer in a test, Koa writing a body that no conditional GET
 * encoded) it stands for the parsed value: slower, never different.
 */
export class JsonText {
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  toJSON(): unknown {
    if (splicing === undefined) return JSON.parse(this.text);
    splicing.push(this.text);
    return `${MARK}${splicing.length - 1}`;
  }
}

// A per-process random mark: an answer's own strings cannot hold it by chance, and no client can learn it.
const MARK = `json-text-${randomBytes(16).toString('hex')}-`;
const QUOTED_MARK = `"${MARK}`;
// The texts of the JsonText values met by the JSON.stringify running now (synchronous, so one at a time).
let splicing: string[] | undefined;

/** `JSON.stringify(value)`, with each JsonText inside written as its text. */
export function serializeJson(value: unknown): string {
  const texts: string[] = [];
  splicing = texts;
  let json: string;
  try {
    json = JSON.stringify(value);
  } finally {
    splicing = undefined;
  }
  if (texts.length === 0) return json;
  // Each mark is a JSON string `"<MARK><index>"` where a JsonText stood: cut there and put the text in.
  const parts: string[] = [];
  let from = 0;
  for (let at = json.indexOf(QUOTED_MARK); at >= 0; at = json.indexOf(QUOTED_MARK, from)) {
    const end = json.indexOf('"', at + QUOTED_MARK.length);
    parts.push(json.slice(from, at), texts[Number(json.slice(at + QUOTED_MARK.length, end))]);
    from = end + 1;
  }
  parts.push(json.slice(from));
  return parts.join('');
}
