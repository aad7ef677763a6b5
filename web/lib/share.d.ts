// Types of `attention-explorer/share`: the explorer's link format (see docs/embedding.md).
import type { Engine, Message, Problem } from './index.js';

/** The explorer page's state (only what differs from its defaults needs to be present). */
export interface ExplorerState {
  preset?: string | null;
  edited?: boolean;
  mode?: 'qkv' | 'self' | 'cross';
  inputs?: Record<string, { text: string; numpy?: string }>;
  /** Optional inputs in use; W_DKV: multi-head latent attention (self-attention), W_KR its rotary part, W_DQ its queries' latent. */
  use?: {
    bias?: boolean;
    W_O?: boolean;
    b_O?: boolean;
    P?: boolean;
    cache?: boolean;
    W_G?: boolean;
    b_G?: boolean;
    W_DKV?: boolean;
    W_KR?: boolean;
    W_DQ?: boolean;
  };
  options?: Record<string, unknown>;
  decimals?: number;
  tokens?: { q?: string; k?: string };
  open?: { step: string; head: number; row: number; col: number } | null;
  hide?: { inputs?: string[]; steps?: string[]; chrome?: boolean };
  lesson?: LessonNotes | null;
  exercise?: {
    steps: string[];
    cells?: Record<string, Array<[number, number]>>;
    tolerance?: number;
    seed?: number;
    teacher?: boolean;
  } | null;
  /** A students' paper (docs/formats.md): the link then opens as the students' exercise. */
  student?: Record<string, unknown> | null;
  collapsed?: string[];
  [key: string]: unknown;
}

export const SHARE_VERSION: number;
export const MAX_LINK_LENGTH: number;
export function toBase64Url(bytes: Uint8Array): string;
export function fromBase64Url(text: string): Uint8Array;
/** "v2=..." (deflate-raw + base64url; "v1=..." where CompressionStream is missing). */
export function encodeStateString(state: ExplorerState): Promise<string>;
/**
 * Reads v1 and v2 hashes ('#' optional), the state checked against linkStateSchema (unknown keys
 * dropped). A link that cannot be read gives `error` (for people, in English) and `message` (the same
 * as { id, values }: `t.message(message)` in another language); a state that does not fit also
 * `reason` (the field and what it should be) and `student` (a students' exercise link). Never rejects.
 */
export function decodeStateString(
  hash: string,
): Promise<{ state: ExplorerState | null; version?: number; error?: string; message?: Message; reason?: string; student?: boolean }>;
export function stateInputs(state: ExplorerState): string[];
/** The problem a state stands for (inputs parsed with engine.parseMatrix). */
export function stateToProblem(state: ExplorerState, engine: Pick<Engine, 'parseMatrix'>): Problem;
/** A state for a problem with number inputs. */
export function problemToState(
  problem: Problem,
  options?: { tokens?: { q?: string[]; k?: string[] }; decimals?: number; preset?: string },
): ExplorerState;

/** A teacher's note for one step: a sentence, a question asked before its numbers show, and how an answer is checked. */
export interface LessonNote {
  say?: string;
  ask?: string;
  answer?: { kind: 'key'; row: number } | { kind: 'number'; row: number; col: number; tolerance: number } | { kind: 'text'; text: string };
}
/** Notes keyed by step ("weights:0"; head -1 for a step without heads): the page state's `lesson`. */
export type LessonNotes = Record<string, LessonNote>;
/** `lang`: the language the lesson is written in (a catalogue's code, i18n.js LANGUAGES), when it says. */
export interface Lesson {
  title: string;
  problem: Problem;
  tokens: { q: string[]; k: string[] } | null;
  lesson: LessonNotes;
  lang?: string;
}
export const LESSON_FORMAT: string;
export const LESSON_VERSION: number;
/** How long fetchLesson waits for an answer, in ms. */
export const LESSON_TIMEOUT_MS: number;
export const ANSWER_KINDS: string[];
/** Checks notes; throws an Error naming the step and the field. */
export function checkNotes(notes: unknown, where?: string): LessonNotes;
/** Reads a lesson file (its text or parsed JSON); throws an Error naming the field. */
/** A lesson file's text fetched from `url`; throws an Error naming the address and what went wrong (no answer within `timeout` ms included). */
export function fetchLesson(url: string, options?: { timeout?: number }): Promise<string>;
export function readLesson(json: string | unknown, where?: string): Lesson;
/** The JSON text of a lesson file. */
export function writeLesson(lesson: {
  title?: string;
  problem: Problem;
  tokens?: { q: string[]; k: string[] } | null;
  lesson?: LessonNotes;
  lang?: string;
}): string;
/** Why notes do not fit a trace (unknown step, row or column out of range), or null. */
export function lessonTraceError(lesson: LessonNotes, trace: import('./index.js').Trace, where?: string): string | null;
/** The same as a message ({ id, values }) for any language, or null. */
export function lessonTraceMessage(lesson: LessonNotes, trace: import('./index.js').Trace, where?: string): Message | null;
/** Checks a student's answer against the trace's numbers: right (null for free text) and the reason. */
export function checkAnswer(
  trace: import('./index.js').Trace,
  key: string,
  answer: NonNullable<LessonNote['answer']>,
  response: number | string | null,
  names?: { tokensQ?: string[]; tokensK?: string[]; decimals?: number; t?: import('./playground.js').Translator },
): { right: boolean | null; reason: string };
export function usableAnswer(answer: unknown): LessonNote['answer'] | null;
export function stepOfKey(trace: import('./index.js').Trace, key: string): import('./index.js').Step | undefined;

// ---- the formats' schemas (formats.js; described in docs/formats.md) ----
/** A schema: a plain object saying a value's type, range and size (web/lib/schema.js). */
export interface Schema {
  type: string;
  expected?: string | Message;
  doc?: string;
  [key: string]: unknown;
}
/**
 * `value` checked against a schema: the value (an object's unknown keys dropped) or the words naming the field:
 * `error` in English, `message` the same as a message (schema.* ids, phrases nested) for any language. Never throws.
 */
export function check(
  schema: Schema,
  value: unknown,
):
  | { value: unknown; error?: undefined; message?: undefined; path?: undefined }
  | { value?: undefined; error: string; message: Message; path: Array<string | number> };
/** A decoded link's object checked against linkStateSchema. */
export function checkLinkState(
  obj: unknown,
): { state: ExplorerState } | { state: null; error: string; message: Message; reason: string; student: boolean };
/** A student's paper checked against paperSchema; messages name `student.` fields. */
export function checkPaper(
  paper: unknown,
): { paper: object; error?: undefined; message?: undefined } | { paper?: undefined; error: string; message: Message };
/** True for a students' link's object: a paper, or an exercise the teacher's page did not start. */
export function isStudentObject(obj: unknown): boolean;
export const linkStateSchema: Schema;
export const pageOptionsSchema: Schema;
export const exerciseSchema: Schema;
export const paperSchema: Schema;
/** `label(key)` names a note in messages: text, or a message ({ id, values }) for any language. */
export function notesSchema(label?: (key: string) => string | Message): Schema;
export const lessonFileSchema: Schema;
export const problemSchema: Schema;
export const embedFlagsSchema: Schema;
export const componentAttributesSchema: Schema;
export const componentScriptSchema: Schema;
export const INPUT_NAMES: string[];
export const STEP_IDS: string[];
export const HIDE_PANELS: string[];
export const LOCK_WORDS: string[];
export const LIMITS: Record<string, number>;
export const KDF_LIMITS: { N: number; r: number; p: number };
export const STEP_KEY: RegExp;
