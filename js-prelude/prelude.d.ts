// The model-facing globals of an exec cell. Checked by `tsc --strict` in the test suite
// (tests/suite/cells.rs) against a sample program.

/** One nested tool as listed in `ALL_TOOLS`. */
interface CodeModeToolInfo {
  /** The JavaScript name: `tools[name]`. */
  readonly name: string;
  /** The tool's description with its TypeScript declaration. */
  readonly description: string;
}

/** An image for `image()`: a data URL, `{image_url, detail?}`, or a raw MCP image block. */
type CodeModeImage =
  | string
  | { image_url: string; detail?: "auto" | "low" | "high" | "original" }
  | { type: "image"; data: string; mimeType?: string; mime_type?: string; _meta?: { [key: string]: unknown } };

/** Every nested tool: returns a promise of its JSON result; rejects with a string. */
declare const tools: { readonly [name: string]: (args?: unknown) => Promise<any> };
/** Name and description of every nested tool, in catalog order. */
declare const ALL_TOOLS: readonly CodeModeToolInfo[];
/** Appends a text item to the output (objects as JSON). */
declare function text(value: unknown): void;
/** Appends an image item (data URLs only); detail defaults to "high". */
declare function image(value: CodeModeImage, detail?: "auto" | "low" | "high" | "original" | null): void;
/** Appends an image from an image-generation result, then its `output_hint` as text. */
declare function generatedImage(result: { image_url?: string; output_hint?: string; [key: string]: unknown }): void;
/** Sends a message to the user right away, while the script keeps running. */
declare function notify(value: unknown): void;
/** Saves a JSON value for later cells of this session (committed when the cell completes). */
declare function store(key: string, value: unknown): void;
/** A fresh copy of a stored value, or undefined. */
declare function load(key: string): any;
/** Ends the current observation now; the script keeps running in the background. */
declare function yield_control(): void;
/** Ends the script successfully right now; nothing after it runs. */
declare function exit(): void;
/** Runs `callback` after `delay` ms; timers never keep the script alive. */
declare function setTimeout(callback: () => void, delay?: number): number;
/** Cancels a timer. */
declare function clearTimeout(id?: number | null): void;
