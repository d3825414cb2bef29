"""The CrossGuard policy pack (`pack.POLICIES`), the offline gate over a rendered plan, and the
baseline comparison that catches replacements. `policies/` in the repository only assembles."""
