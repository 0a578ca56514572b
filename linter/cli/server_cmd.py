"""``krpc-lint server``: the language server for spec authors' editors (``linter.server``, docs/editors.md)."""

from __future__ import annotations

import click


@click.command("server")
@click.option("--stdio", is_flag=True, help="Speak LSP on standard input and output (the default, and the only "
                                            "transport; accepted because editors pass it).")
def server_command(stdio: bool) -> None:
    """Run the Language Server Protocol over stdio: diagnostics as you type, quick fixes, hover on fields."""
    try:
        from linter.server.lsp import serve
    except ImportError as exc:  # pygls is the server extra
        raise click.ClickException(f"the language server needs pygls: pip install 'krpc-lint[server]' ({exc})")
    serve()


__all__ = ["server_command"]
