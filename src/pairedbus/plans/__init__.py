"""A plan as data, without Pulumi: the planned resources, URNs, state files read as a baseline, and
the comparison against that baseline. Both `iac.plan` (which renders a plan) and `policy` (which
gates one) read it; neither imports the other for it."""
