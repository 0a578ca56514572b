// Starts `krpc-lint server` for JSON files: everything else (diagnostics, fixes, hover, compat) is the server's.
"use strict";
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const settings = vscode.workspace.getConfiguration("krpcLint");
  const [command, ...args] = settings.get("command", ["krpc-lint", "server"]);
  const compatAgainst = settings.get("compatAgainst", "");
  client = new LanguageClient(
    "krpc-lint",
    "krpc-lint",
    { command, args },
    {
      documentSelector: [
        { scheme: "file", language: "json" },
        { scheme: "file", language: "jsonc" },
      ],
      initializationOptions: compatAgainst ? { compatAgainst } : {},
    },
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
