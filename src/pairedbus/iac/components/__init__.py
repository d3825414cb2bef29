"""The Pulumi components, one per file; each usable on its own."""
