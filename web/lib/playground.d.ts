// Types of `attention-explorer/playground` (web/lib/playground.js).
import type { ModelCatalogue, ModelWorker, TrainConfig } from './index.js';

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
  linkFor?: (state: unknown) => string | null;
}

export interface Playground {
  readonly store: { get(): unknown; dispatch(action: (state: any, ...args: any[]) => any, ...args: unknown[]): unknown; subscribe(select: (state: any) => unknown, draw: (part: any, state: any) => void): () => void };
  readonly remote: ModelWorker;
  /** The training loop behind the buttons (the page's own: its methods may change). */
  readonly trainer: object;
  destroy(): void;
}

/** Mounts the playground on an element (or shadow root). */
export function mountPlayground(root: Element | ShadowRoot, options?: PlaygroundOptions): Promise<Playground>;
/** The hash of a link to this state: "#p=<preset>&c=<changes>&step=N". */
export function linkOf(state: unknown): string;
/** Reads such a hash: the preset, the changes and the step; a damaged part is left out with a message. */
export function readLink(hash: string, catalogue: ModelCatalogue): { preset: string; overrides: Partial<TrainConfig>; step: number; error: string | null };
/** <attention-playground task="induction" autoplay explorer="https://.../index.html">. */
export class AttentionPlayground extends HTMLElement {}
