"""The stack-config model: what `stacks/Pulumi.<stack>.yaml` may say, validated in one pass."""

from pairedbus.iac.config.model import *  # noqa: F403 - the model's public names, listed once in its __all__
from pairedbus.iac.config.model import __all__  # noqa: F401
