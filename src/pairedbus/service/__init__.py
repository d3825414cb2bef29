"""What any long-running pairedbus process needs around its work: JSON logs, health and metrics."""
