"""The package's version, in one place: pyproject.toml reads it (``[tool.setuptools.dynamic]``), the
package root re-exports it, and the layers that report it (handshake, telemetry, OpenTelemetry, the
CLI) import it from here rather than from the package root."""

__version__ = "0.1.0"
