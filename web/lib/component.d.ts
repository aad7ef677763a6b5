// Types of `attention-explorer/component`: the <attention-explorer> custom element.
import type { Engine, LoadOptions, Problem, Trace, Translator } from './index.js';

export interface AttentionExplorerEventDetail {
  problem: Problem;
  trace: Trace;
}

/**
 * <attention-explorer preset="000" steps="weights,output" editable="Q">, or a lesson:
 * <attention-explorer lesson="lesson.json"> or a child <script type="application/json" slot="lesson">.
 */
export class AttentionExplorerElement extends HTMLElement {
  /** Give the KaTeX module to typeset formulas (as MathML); plain text otherwise. */
  static katex: { renderToString(tex: string, options?: object): string } | null;
  static readonly observedAttributes: string[];
  /** A copy of the current problem, or null before it is loaded. */
  problem: Problem | null;
  /** The trace of the current problem, or null. */
  readonly trace: Trace | null;
  addEventListener(type: 'change' | 'ready', listener: (event: CustomEvent<AttentionExplorerEventDetail>) => void, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: 'error', listener: (event: CustomEvent<{ message: string }>) => void, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
}

/** The one engine all elements share (loaded on first use). */
export function sharedEngine(options?: LoadOptions): Promise<Engine>;

/**
 * An attribute's text (null when absent) read and checked against componentAttributesSchema
 * (attention-explorer/share): the value it takes (null: the default) and what was left out.
 */
export function readAttribute<K extends string>(
  name: K,
  text: string | null,
  t?: Translator,
): { value: (K extends keyof ComponentAttributes ? ComponentAttributes[K] : unknown) | null; note: string | null };
/** The attributes componentAttributesSchema takes, as readAttribute gives their values. */
export interface ComponentAttributes {
  preset: string;
  state: string;
  lesson: string;
  /** Step ids. */
  steps: string[];
  /** Input names, or "all". */
  inputs: string[];
  editable: string[];
  decimals: number;
  /** Heads from 1. */
  heads: number[];
  'wasm-url': string;
}

declare global {
  interface HTMLElementTagNameMap {
    'attention-explorer': AttentionExplorerElement;
  }
}
