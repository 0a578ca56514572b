"""Names shared by the engine, the outputs and the CLI; importing this module costs nothing."""

SEVERITIES = ("error", "warning", "info")
PROFILES = ("kafka", "recommended", "strict")
FORMATS = ("text", "json", "sarif", "github", "junit")
