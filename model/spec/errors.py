"""What the kernel raises for a model it cannot build."""


class ConfigError(ValueError):
    """A configuration that the model cannot take (bad input: exit code 2)."""
