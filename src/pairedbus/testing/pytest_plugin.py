"""pytest plugin registered by the pairedbus package (fixtures for the Service Bus fake)."""
