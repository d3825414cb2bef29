"""The Pulumi components of the pairedbus program, one per file."""
