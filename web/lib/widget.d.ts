// Types of `attention-explorer/widget`: an anywidget module (render({ model, el }), initialize({ model })).
import type { Problem } from './index.js';
export { AttentionExplorerElement } from './component.js';

/** The part of anywidget's model the widget uses. */
export interface AttentionWidgetModel {
  get(key: 'problem'): Problem | string | null | undefined;
  get(key: 'trace'): unknown;
  get(key: 'steps' | 'inputs' | 'editable' | 'heads' | 'decimals'): string | number | string[] | null | undefined;
  get(key: string): unknown;
  set(key: 'problem', value: Problem): void;
  /** The trace, JSON-safe (non-finite numbers as "inf", "-inf", "nan"), or null. */
  set(key: 'trace', value: unknown): void;
  set(key: string, value: unknown): void;
  on(event: string, callback: () => void): void;
  off(event?: string | null, callback?: (() => void) | null): void;
  save_changes(): void;
}

declare const widget: {
  initialize(context: { model: AttentionWidgetModel }): void;
  /** Draws the explorer into `el`; returns the cleanup anywidget calls when the view goes. */
  render(context: { model: AttentionWidgetModel; el: HTMLElement }): () => void;
};
export default widget;
