/**
 * The slice of the Language Server Protocol (3.17) the kernel speaks (docs/kernel.md §6.3–6.4): method names,
 * the message shapes it reads, and the client capabilities of the shared LSP profile.
 */

export const Method = {
  initialize: 'initialize',
  initialized: 'initialized',
  shutdown: 'shutdown',
  exit: 'exit',
  didOpen: 'textDocument/didOpen',
  didChange: 'textDocument/didChange',
  didClose: 'textDocument/didClose',
  didChangeWatchedFiles: 'workspace/didChangeWatchedFiles',
  prepareRename: 'textDocument/prepareRename',
  rename: 'textDocument/rename',
  definition: 'textDocument/definition',
  documentSymbol: 'textDocument/documentSymbol',
  // server → client
  configuration: 'workspace/configuration',
  registerCapability: 'client/registerCapability',
  unregisterCapability: 'client/unregisterCapability',
  workDoneProgressCreate: 'window/workDoneProgress/create',
  diagnosticRefresh: 'workspace/diagnostic/refresh',
  applyEdit: 'workspace/applyEdit',
  progress: '$/progress',
  serverStatus: 'experimental/serverStatus',
  logMessage: 'window/logMessage',
  publishDiagnostics: 'textDocument/publishDiagnostics',
} as const;

/** JSON-RPC / LSP error codes the kernel distinguishes. */
export const LspErrorCode = {
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  RequestFailed: -32803,
  ContentModified: -32801,
} as const;

export interface Position {
  line: number;
  character: number;
}
export interface Range {
  start: Position;
  end: Position;
}
export interface Location {
  uri: string;
  range: Range;
}
export interface LocationLink {
  targetUri: string;
  targetRange: Range;
  targetSelectionRange: Range;
}
export interface TextEdit {
  range: Range;
  newText: string;
}
export interface TextDocumentEdit {
  textDocument: { uri: string; version: number | null };
  edits: TextEdit[];
}
export interface ResourceOperation {
  kind: 'create' | 'rename' | 'delete';
  uri?: string;
  oldUri?: string;
  newUri?: string;
}
export interface WorkspaceEdit {
  changes?: Record<string, TextEdit[]>;
  documentChanges?: (TextDocumentEdit | ResourceOperation)[];
}
export interface DocumentSymbol {
  name: string;
  kind: number;
  range: Range;
  selectionRange: Range;
  children?: DocumentSymbol[];
}
/** The flat, pre-3.10 shape some servers still answer documentSymbol with. */
export interface SymbolInformation {
  name: string;
  kind: number;
  location: Location;
  containerName?: string;
}
export type PrepareRenameResult = Range | { range: Range; placeholder: string } | { defaultBehavior: boolean } | null;
export type DefinitionResult = Location | Location[] | LocationLink[] | null;

/** LSP SymbolKind numbers used by the outline mapping. */
export const LspSymbolKind = {
  File: 1,
  Module: 2,
  Namespace: 3,
  Package: 4,
  Class: 5,
  Method: 6,
  Property: 7,
  Field: 8,
  Constructor: 9,
  Enum: 10,
  Interface: 11,
  Function: 12,
  Variable: 13,
  Constant: 14,
  String: 15,
  Number: 16,
  Boolean: 17,
  Array: 18,
  Object: 19,
  Key: 20,
  Null: 21,
  EnumMember: 22,
  Struct: 23,
  Event: 24,
  Operator: 25,
  TypeParameter: 26,
} as const;

/** Client capabilities of the shared LSP profile (§6.3). */
export function clientCapabilities(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    textDocument: {
      synchronization: { dynamicRegistration: false, didSave: false },
      rename: { dynamicRegistration: false, prepareSupport: true },
      definition: { dynamicRegistration: false, linkSupport: false },
      documentSymbol: { dynamicRegistration: false, hierarchicalDocumentSymbolSupport: true },
    },
    workspace: {
      configuration: true,
      workspaceFolders: true,
      workspaceEdit: { documentChanges: true, resourceOperations: [] },
      didChangeWatchedFiles: { dynamicRegistration: false },
    },
    window: { workDoneProgress: true },
    general: { positionEncodings: ['utf-8', 'utf-16'] },
    ...extra,
  };
}
