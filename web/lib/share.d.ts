// Types of `attention-explorer/share`: the explorer's link format (see docs/embedding.md).
import type { Engine, Problem } from './index.js';

/** The explorer page's state (only what differs from its defaults needs to be present). */
export interface ExplorerState {
  preset?: string | null;
  edited?: boolean;
  mode?: 'qkv' | 'self' | 'cross';
  inputs?: Record<string, { text: string; numpy?: string }>;
  use?: { bias?: boolean; W_O?: boolean; b_O?: boolean };
  options?: Record<string, unknown>;
  decimals?: number;
  tokens?: { q?: string; k?: string };
  open?: { step: string; head: number; row: number; col: number } | null;
  hide?: { inputs?: string[]; steps?: string[]; chrome?: boolean };
  exercise?: { steps: string[]; cells?: Record<string, Array<[number, number]>>; tolerance?: number; seed?: number } | null;
  [key: string]: unknown;
}

export const SHARE_VERSION: number;
export const MAX_LINK_LENGTH: number;
export function toBase64Url(bytes: Uint8Array): string;
export function fromBase64Url(text: string): Uint8Array;
/** "v2=..." (deflate-raw + base64url; "v1=..." where CompressionStream is missing). */
export function encodeStateString(state: ExplorerState): Promise<string>;
/** Reads v1 and v2 hashes ('#' optional). */
export function decodeStateString(hash: string): Promise<{ state: ExplorerState | null; version?: number; error?: string }>;
export function stateInputs(state: ExplorerState): string[];
/** The problem a state stands for (inputs parsed with engine.parseMatrix). */
export function stateToProblem(state: ExplorerState, engine: Engine): Problem;
/** A state for a problem with number inputs. */
export function problemToState(problem: Problem, options?: { tokens?: { q?: string[]; k?: string[] }; decimals?: number; preset?: string }): ExplorerState;
