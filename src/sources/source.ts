/**
 * The config source seam: where configuration text comes from, and when it may have changed. A
 * source knows nothing of flags: it hands over documents and the environments its layout names, as
 * flagd's sync providers hand raw data to its store; src/config/ parses and validates them.
 */
import type { InputSet } from "./inputs.js";

/**
 * One document: its text, its bytes as read (a file: UTF-8 is checked where it is parsed, with
 * the hash that tells the same bytes again), its data (given as values, not text: the inline
 * source), or why it could not be had. `file` names it in problems (a path, a URL, or `<inline:ENV>`).
 */
export type SourceDocument =
  /** `finalUrl`: a URL document answered from another address (redirects followed). */
  | { file: string; text: string; finalUrl?: string }
  | { file: string; bytes: Uint8Array; hash: string }
  | { file: string; value: unknown }
  /** `line`/`col`: where in the document, when the problem has a place (invalid UTF-8). */
  | { file: string; error: string; line?: number; col?: number };

/** An environment named by the source's layout (a directory entry), with its documents in merge order. */
export interface SourceEnvironment {
  name: string;
  documents: SourceDocument[];
  /** The subdirectory, when the environment is one (its documents together must define `flags`). */
  dir?: string;
}

/** A problem finding documents (not inside one): an unreadable directory, a name defined twice. */
export interface SourceProblem {
  /** The environment it concerns, or "" for none. */
  env: string;
  file: string;
  message: string;
}

/** What one read of a source found. */
export interface SourceLoad {
  /** The source, for problems about it as a whole (a path or URL). */
  id: string;
  /** Documents whose content decides their environments (a single file, a URL): an `environments:` map, or one named by `stem`. */
  documents: { stem: string; document: SourceDocument }[];
  environments: SourceEnvironment[];
  problems: SourceProblem[];
}

export interface SourceListener {
  /** The content may have changed: reload (spurious calls cost a reload, nothing else). */
  changed(): void;
  /** Something went wrong watching (the content itself is still read by `read`). */
  error(error: Error): void;
}

/** What a source reads: files and directories, a URL, or environments given as data. */
export type SourceKind = "files" | "url" | "inline";

export interface ConfigSource {
  /** A path or URL, for logs. */
  readonly id: string;
  /** What it reads, said by the source itself: no caller reads it from the id. */
  readonly kind: SourceKind;
  /**
   * Reads the configuration as it is now, recording every input read in `inputs` (see ./inputs.ts).
   * Never throws for what it reads: problems are in the result.
   */
  read(inputs?: InputSet): Promise<SourceLoad>;
  /** Starts telling `listener` when the content may have changed. Called at most once. */
  watch(listener: SourceListener): Promise<void>;
  close(): Promise<void>;
}

/** The id of the inline source (environments given as data): neither a path nor a URL. */
export const INLINE_ID = "<inline>";

/** The kind of source a spec names (a command-line argument, a source's id, a document's file): the one place it is read from text. */
export const sourceKindOf = (spec: string): SourceKind => (/^https?:\/\//i.test(spec) ? "url" : spec === INLINE_ID ? "inline" : "files");
