"""Entry point of the component provider for `pulumi package add` (PulumiPlugin.yaml, `main: provider`).

The repository root's __main__.py is this project's own Pulumi program, so the plugin's entry is here.
"""

from pairedbus.iac.provider import main

main()
