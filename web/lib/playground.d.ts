// Types of `attention-explorer/playground` (web/lib/playground.js).
import type { ModelCatalogue, ModelWeights, ModelWorker, TrainConfig } from './index.js';

/** The playground's state (playground-state.js initialState): the fields a page reads. */
export interface PlaygroundState {
  catalogue: ModelCatalogue;
  /** The preset's name. */
  preset: string;
  config: TrainConfig;
  status: 'idle' | 'playing' | 'paused' | 'done' | 'replaying' | 'error';
  error: string | null;
  /** Training steps taken. */
  step: number;
  questions: PlaygroundQuestion[];
  lesson: { title: string; intro: string; changes: Partial<TrainConfig> } | null;
  [key: string]: unknown;
}
/** A question the run answers (docs/playground.md). */
export type PlaygroundQuestion =
  | { choose: 'layer' | 'head'; text: string; score: 'previous_token' | 'induction' | 'duplicate_token' | 'first_token'; threshold: number }
  | { choose: 'yes_no'; text: string; accuracy: number };
/** A playground lesson file (formats.js playgroundLessonSchema). */
export interface PlaygroundLesson {
  format: 'attention-explorer playground lesson';
  version: 1;
  title?: string;
  intro?: string;
  preset: string;
  changes?: Partial<TrainConfig>;
  questions?: PlaygroundQuestion[];
}
/** A weights file as Save weights writes it (and loadWeights reads; `attention-explorer train --weights` too). */
export interface PlaygroundWeightsFile {
  model: TrainConfig['model'];
  weights: ModelWeights;
  config: TrainConfig;
  step: number;
}

export interface PlaygroundOptions {
  /** A Worker running attention-explorer/model-worker (default: a new one next to this module). */
  worker?: Worker;
  /** A preset of engine.modelCatalogue() (default "induction"). */
  preset?: string;
  /** Changes laid over the preset's configuration. */
  overrides?: Partial<TrainConfig>;
  /** A link's hash ("#p=induction&c=...&step=430"): its preset, changes and step (readLink). */
  link?: string;
  /** Train to this step, then pause. */
  step?: number;
  autoplay?: boolean;
  /** The explorer page "Open in the explorer" goes to; without it heads are not opened. */
  explorerUrl?: string | null;
  /** The link back to this playground, given to the explorer. */
  linkFor?: (state: PlaygroundState) => string | null;
  /** The language (a code of LANGUAGES; negotiated: "zh" finds "zh-CN"); default: the browser's languages. */
  lang?: string | null;
}

/** A message not yet formatted: its id in the catalogues (web/lib/locales) and its values. */
export interface Message {
  id: string;
  values?: Record<string, unknown>;
}
/** Formats a message of the learner's language (English's when its catalogue lacks it). */
export interface Translator {
  (id: string, values?: Record<string, unknown>): string;
  readonly lang: string;
  readonly dir: 'ltr' | 'rtl';
  has(id: string): boolean;
  message(message: Message): string;
  /** The language's list of items ("a, b and c"). */
  list(items: string[]): string;
}

export interface Playground {
  readonly store: {
    get(): PlaygroundState;
    dispatch(action: (state: PlaygroundState, ...args: any[]) => PlaygroundState, ...args: unknown[]): PlaygroundState;
    flush(): void;
    subscribe<P>(select: (state: PlaygroundState) => P, draw: (part: P, state: PlaygroundState) => void): () => void;
  };
  readonly remote: ModelWorker;
  /** The training loop behind the buttons: one step, the weights saved and loaded, a head opened in the explorer. */
  readonly trainer: {
    readonly canOpen: boolean;
    step(): Promise<void>;
    saveWeights(): Promise<PlaygroundWeightsFile>;
    /** A saved file (or { model, weights } from the CLI); throws an Error naming the field when it does not fit. */
    loadWeights(file: unknown): Promise<void>;
    /** Opens the head on the probe in the explorer (a new tab); resolves to its address. */
    openInExplorer(layer: number, head: number): Promise<string>;
  };
  /** The words of the playground's language. */
  readonly t: Translator;
  destroy(): void;
}

/** Mounts the playground on an element (or shadow root). */
export function mountPlayground(root: Element | ShadowRoot, options?: PlaygroundOptions): Promise<Playground>;
/** The hash of a link to this state: "#p=<preset>&c=<changes>&step=N". */
export function linkOf(state: PlaygroundState): string;
/** A lesson file of this state: its preset, its changes from it, its questions and the lesson's words. */
export function lessonOf(state: PlaygroundState, words?: { title?: string; intro?: string }): PlaygroundLesson;
/** A lesson's text checked (JSON, its schema, a preset of the catalogue), or an error naming the field; `where` names the file. */
export function readPlaygroundLesson(
  text: string,
  catalogue: ModelCatalogue,
  where?: string,
): { lesson: PlaygroundLesson; error?: undefined; message?: undefined } | { lesson?: undefined; error: string; message: Message };
/** An action: the lesson opened (its preset and changes from step 0, its questions asked). */
export function openLesson(state: PlaygroundState, lesson: PlaygroundLesson): PlaygroundState;
/** Reads such a hash: the preset, the changes and the step; a damaged part is left out with a message. */
export function readLink(
  hash: string,
  catalogue: ModelCatalogue,
): { preset: string; overrides: Partial<TrainConfig>; step: number; error: string | null; message?: Message };
/** The languages of the catalogues: code -> the language's own name. */
export const LANGUAGES: Readonly<Record<string, string>>;
/** 'rtl' for Arabic, else 'ltr'. */
export function dirOf(lang: string): 'ltr' | 'rtl';
/** The language to show: `asked` (?lang=) first, then `preferred` (navigator.languages), then 'en'. */
export function negotiate(asked: string | null | undefined, preferred?: readonly string[]): string;
/** The translator of a language (its catalogue loaded; English's for an unknown code). */
export function loadTranslator(lang: string): Promise<Translator>;
/** <attention-playground task="induction" autoplay explorer="https://.../index.html" lang="fr">. */
export class AttentionPlayground extends HTMLElement {}
