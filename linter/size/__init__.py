"""``krpc-lint size``: the wire-size advisor (KIP-636): bytes per field path of generated values, of given
values or of a captured frames corpus, and what editing the specs would save; its reports (text, JSON, HTML)."""
