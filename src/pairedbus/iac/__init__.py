"""Everything of pairedbus that imports Pulumi: components, the backlog-queue dynamic provider, the
stack-config model, the offline plan and live drift. Needs the `iac` extra
(`pip install 'pairedbus[iac]'`); the runtime (sender, syphon) never imports this package.
"""
