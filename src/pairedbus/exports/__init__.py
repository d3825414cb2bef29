"""Exports from Azure that feed the audit: the inventory (ARM + data plane) and the metrics (Azure
Monitor). SDK calls only, no Spark. Importing this package is cheap: the SDKs load in the functions.
"""
