"""Names shared by the engine, the outputs and the CLI; importing this module costs nothing."""

SEVERITIES = ("error", "warning", "info")
PROFILES = ("kafka", "recommended", "strict")
# A rule's lifecycle, as ruff and buf have it: preview rules run only when named, deprecated ones still run
# (naming one warns), removed ones never run (naming one is a usage error); the last two say what replaces them.
STATUSES = ("stable", "preview", "deprecated", "removed")
FORMATS = ("text", "json", "sarif", "github", "junit")
# Kafka releases whose generator a lint can stand for (``--kafka-version``); "any" is the default.
# ``linter.model.targets.TARGETS`` defines each; a test keeps the two in step.
KAFKA_VERSIONS = ("any", "2.8", "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9",
                  "4.0", "4.1", "4.2", "4.3", "trunk")
