"""The Action's ``comment: true``: the job summary as one pull-request comment, posted once and then updated.

The comment is found again by a marker on its first line, so every run of a pull request edits the same comment
instead of adding one. The GitHub API is reached at ``GITHUB_API_URL`` (the runner sets it; tests point it at a
local stub) with the token the workflow passes as ``github-token``; a failure to post is a warning in the log,
never the check's verdict.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

from linter.errors import KrpcLintError

MARKER = "<!-- krpc-lint: pull-request comment -->"
MAX_BODY = 65_000  # GitHub refuses comments above 65,536 characters
MAX_ANSWER = 16 << 20  # bytes of an API answer read
TIMEOUT = 30


class CommentError(KrpcLintError):
    """The comment could not be posted; the message says why (for a warning)."""


def post_summary(env: Mapping[str, str], token: str, summary: str, number: int | None) -> str:
    """Post or update the krpc-lint comment of pull request ``number`` (``None``: the event has none); what was
    done, for the log."""
    repository = env.get("GITHUB_REPOSITORY", "")
    if number is None or not repository:
        raise CommentError("no pull request in this event: nothing to comment on")
    api = env.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    body = f"{MARKER}\n{summary}"
    if len(body) > MAX_BODY:
        body = body[:MAX_BODY] + "\n\n… (cut: the whole summary is in the job's summary)"
    comments = _call("GET", f"{api}/repos/{repository}/issues/{number}/comments?per_page=100", token)
    mine = next((c for c in comments if isinstance(c, dict) and str(c.get("body", "")).startswith(MARKER)),
                None) if isinstance(comments, list) else None
    if mine is not None and type(mine.get("id")) is int:
        _call("PATCH", f"{api}/repos/{repository}/issues/comments/{mine['id']}", token, {"body": body})
        return f"updated the pull request's krpc-lint comment {mine['id']}"
    _call("POST", f"{api}/repos/{repository}/issues/{number}/comments", token, {"body": body})
    return "posted the krpc-lint comment on the pull request"


def _call(method: str, url: str, token: str, payload: dict[str, Any] | None = None) -> Any:
    if not url.startswith(("https://", "http://")):
        raise CommentError(f"GITHUB_API_URL must be an http(s) URL, not {url!r}")
    data = json.dumps(payload).encode() if payload is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={
        "Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
        "Content-Type": "application/json", "User-Agent": "krpc-lint-action"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:  # an http(s) URL: checked above
            raw = answer.read(MAX_ANSWER)
    except (urllib.error.URLError, OSError) as exc:
        raise CommentError(f"{method} {url.split('?')[0]}: {exc}") from None
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        raise CommentError(f"{method} {url.split('?')[0]}: the answer is not JSON") from None


__all__ = ["MARKER", "CommentError", "post_summary"]
