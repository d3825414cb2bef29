"""Sub-commands of the `pairedbus` CLI; see pairedbus.cli."""
